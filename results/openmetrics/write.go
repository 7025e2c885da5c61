package openmetrics

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Write writes the metrics as OpenMetrics text: each family in turn (the
// gauges, the counters, then the histograms), in it each engine's series
// in engine order, each series' points in time order from 0 to the last
// grid point, ending with "# EOF". Gauges past the end of an engine's
// timeline keep its last value. Cost: O(points × engines × buckets);
// memory O(1) beyond the Recorder.
func (r *Recorder) Write(w io.Writer, model string) error {
	ww := &writer{bw: bufio.NewWriterSize(w, 1<<16), r: r, points: r.points()}
	ww.labels = make([]string, len(r.engines))
	for i, e := range r.engines {
		ww.labels[i] = `model_name="` + escape(model) + `",engine="` + escape(e.Name) +
			`",pool="` + escape(e.Pool) + `",role="` + escape(e.Role) + `"`
	}
	ww.gauge(gaugeRunning, func(s *series, k int) float64 { return float64(at(s.running, k)) })
	ww.gauge(gaugeWaiting, func(s *series, k int) float64 { return float64(at(s.waiting, k)) })
	ww.gauge(gaugeKV, func(s *series, k int) float64 { return at(s.kv, k) })
	ww.counter(cntPreempt, func(s *series) []int64 { return s.preempt }, false)
	ww.counter(cntPrompt, func(s *series) []int64 { return s.prompt }, true)
	ww.counter(cntGen, func(s *series) []int64 { return s.gen }, true)
	ww.success()
	for h := range numHists {
		ww.histogram(h)
	}
	ww.bw.WriteString("# EOF\n")
	return ww.bw.Flush()
}

// points is the number of grid points written: every point any series
// reaches.
func (r *Recorder) points() int {
	n := 0
	for i := range r.series {
		n = max(n, len(r.series[i].running), len(r.series[i].prompt))
	}
	return n
}

// at is xs[k], or its last element past its end (0 when empty).
func at[T int32 | int64 | float64](xs []T, k int) T {
	if len(xs) == 0 {
		var zero T
		return zero
	}
	return xs[min(k, len(xs)-1)]
}

// writer writes lines into one reused buffer.
type writer struct {
	bw     *bufio.Writer
	r      *Recorder
	points int
	labels []string // per engine, without braces
	line   []byte
}

// header writes a family's TYPE and HELP lines.
func (w *writer) header(f family) {
	w.bw.WriteString("# TYPE " + f.name + " " + f.typ + "\n# HELP " + f.name + " " + f.help + "\n")
}

// sample writes one line, name{labels extra} value timestamp, of engine
// e at point k: appendValue appends the value.
func (w *writer) sample(name string, e int, extra string, k int, appendValue func([]byte) []byte) {
	b := append(w.line[:0], name...)
	b = append(b, '{')
	b = append(b, w.labels[e]...)
	b = append(b, extra...)
	b = append(b, "} "...)
	b = appendValue(b)
	b = append(b, ' ')
	b = appendTime(b, int64(k)*w.r.intervalNs)
	b = append(b, '\n')
	w.line = b
	w.bw.Write(b)
}

func (w *writer) gauge(f family, value func(*series, int) float64) {
	w.header(f)
	for e := range w.r.series {
		for k := range w.points {
			v := value(&w.r.series[e], k)
			w.sample(f.name, e, "", k, func(b []byte) []byte { return appendFloat(b, v) })
		}
	}
}

// counter writes a counter family from each engine's values: deltas per
// point, or totals already (deltas false).
func (w *writer) counter(f family, values func(*series) []int64, deltas bool) {
	w.header(f)
	w.counterSeries(f, "", values, deltas)
}

// counterSeries writes one series per engine of a counter family, with
// the extra labels.
func (w *writer) counterSeries(f family, extra string, values func(*series) []int64, deltas bool) {
	for e := range w.r.series {
		xs := values(&w.r.series[e])
		var total int64
		for k := range w.points {
			if !deltas {
				total = at(xs, k)
			} else if k < len(xs) {
				total += xs[k]
			}
			w.sample(f.name+"_total", e, extra, k, func(b []byte) []byte { return strconv.AppendInt(b, total, 10) })
		}
	}
}

// success writes vllm:request_success, a series per engine and reason.
func (w *writer) success() {
	w.header(cntSuccess)
	for reason, name := range finishReasons {
		w.counterSeries(cntSuccess, `,finished_reason="`+name+`"`,
			func(s *series) []int64 { return s.success[reason] }, true)
	}
}

// histogram writes histogram h: at every point, each bucket's cumulative
// count (le), then _count and _sum.
func (w *writer) histogram(h int) {
	f := hists[h]
	w.header(family{f.name, "histogram", f.help})
	les := make([]string, len(f.buckets)+1)
	for i, b := range f.buckets {
		les[i] = `,le="` + formatLe(b) + `"`
	}
	les[len(f.buckets)] = `,le="+Inf"`
	nb := len(les)
	cum := make([]uint64, nb)
	for e := range w.r.series {
		hs := &w.r.series[e].hists[h]
		clear(cum)
		sum := 0.0
		for k := range w.points {
			if k < len(hs.sums) {
				for i := range nb {
					cum[i] += uint64(hs.counts[k*nb+i])
				}
				sum += hs.sums[k]
			}
			var below uint64
			for i := range nb {
				below += cum[i]
				w.sample(f.name+"_bucket", e, les[i], k, func(b []byte) []byte { return strconv.AppendUint(b, below, 10) })
			}
			w.sample(f.name+"_count", e, "", k, func(b []byte) []byte { return strconv.AppendUint(b, below, 10) })
			w.sample(f.name+"_sum", e, "", k, func(b []byte) []byte { return appendFloat(b, sum) })
		}
	}
}

// appendTime appends Epoch + ns as seconds, to the ns, trailing zeros cut.
func appendTime(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, Epoch+ns/1e9, 10)
	if frac := ns % 1e9; frac != 0 {
		s := strconv.FormatInt(1e9+frac, 10)[1:] // nine digits
		b = append(b, '.')
		b = append(b, strings.TrimRight(s, "0")...)
	}
	return b
}

// appendFloat appends v in the shortest form that reads back as v.
func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

// formatLe writes a bucket bound as Python's prometheus_client does (a
// whole number with ".0"), so that le values match a vLLM server's.
func formatLe(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// escape escapes a label value: backslash, double quote and newline.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
