package workload

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"handoff/sim"
)

// NewServeGen returns a source that generates requests from a ServeGen
// client description (Xiang et al., arXiv 2505.09999): trace is its
// chunk-N-trace.csv, one row per window "window_start_s,rate_rps,cv,family,
// p1,p2" (no header; family Gamma or Weibull with shape p1 and scale p2 s,
// or empty when the window is idle; shapes must be in [0.01, 1000]), and dataset its chunk-N-dataset.json,
// which maps window start seconds to PMFs of input and output tokens; a
// request uses the PMFs of the latest dataset window at or before its own.
//
// Within a window, gaps follow the window's family with shape p1, rescaled
// so the mean gap is 1/rate_rps (the measured rate is kept; the fitted
// scale is not always consistent with it); with no family but a positive
// rate, gaps are exponential. The arrival process restarts at each window.
// windows lists the window_start_s values to replay, back to back from time
// 0; none means every window in file order. file names the trace in errors
// (the dataset is named by replacing "trace.csv" with "dataset.json").
// Both inputs are read whole (a few hundred kB); requests are generated
// on demand. Prefix is nil (ServeGen publishes no prompt content).
func NewServeGen(trace, dataset io.Reader, file string, rng *rand.Rand, windows ...int) (sim.Source, error) {
	rows, err := readServeGenTrace(trace, file)
	if err != nil {
		return nil, err
	}
	pmfs, err := readServeGenDataset(dataset, datasetName(file))
	if err != nil {
		return nil, err
	}
	if rows, err = selectWindows(rows, file, windows); err != nil {
		return nil, err
	}
	g := &serveGen{rng: rng, windows: rows}
	startNs := int64(0)
	for i := range g.windows {
		w := &g.windows[i]
		w.offsetNs = startNs - w.startNs
		startNs += w.lengthNs
		if err := w.prepare(pmfs, rng); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, w.line, err)
		}
	}
	g.enter(0)
	return g, nil
}

// datasetName names the dataset for errors: chunk-0-trace.csv's dataset is
// chunk-0-dataset.json.
func datasetName(traceFile string) string {
	if base, ok := strings.CutSuffix(traceFile, "trace.csv"); ok {
		return base + "dataset.json"
	}
	return traceFile + " (dataset)"
}

// serveGenWindow is one row of a ServeGen trace.
type serveGenWindow struct {
	line              int
	startNs, lengthNs int64 // as in the file
	offsetNs          int64 // added to file times to place the window in the replay
	rate, shape       float64
	family            string
	gaps              func() float64 // ns
	input, output     *lengthSampler
}

type serveGen struct {
	rng     *rand.Rand
	windows []serveGenWindow
	cur     int
	timeNs  float64 // last arrival (or window start), file time
	nextID  int64
}

// enter starts window i.
func (g *serveGen) enter(i int) {
	g.cur = i
	if i < len(g.windows) {
		g.timeNs = float64(g.windows[i].startNs)
	}
}

// Next implements sim.Source. Cost per request: O(log n) for n PMF points.
func (g *serveGen) Next(r *sim.Request) (bool, error) {
	for g.cur < len(g.windows) {
		w := &g.windows[g.cur]
		if w.rate > 0 {
			g.timeNs += w.gaps()
			if t := int64(math.Round(g.timeNs)); t < w.startNs+w.lengthNs {
				*r = sim.Request{ID: g.nextID, ArrivalNs: t + w.offsetNs,
					PromptTokens: w.input.draw(g.rng), OutputTokens: w.output.draw(g.rng)}
				g.nextID++
				return true, nil
			}
		}
		g.enter(g.cur + 1)
	}
	return false, nil
}

// prepare sets up w's gap sampler and picks its length PMFs.
func (w *serveGenWindow) prepare(pmfs []serveGenPMF, rng *rand.Rand) error {
	if w.rate == 0 {
		return nil
	}
	meanNs := 1e9 / w.rate
	switch w.family {
	case "Gamma":
		g := distuv.Gamma{Alpha: w.shape, Beta: w.shape / meanNs, Src: rng}
		w.gaps = g.Rand
	case "Weibull":
		// A Weibull with shape k and scale λ has mean λ·Γ(1 + 1/k).
		d := distuv.Weibull{K: w.shape, Lambda: meanNs / math.Gamma(1+1/w.shape), Src: rng}
		w.gaps = d.Rand
	case "":
		w.gaps = func() float64 { return rng.ExpFloat64() * meanNs }
	default:
		return fmt.Errorf("family: %q is not Gamma or Weibull", w.family)
	}
	i := len(pmfs) - 1
	for i >= 0 && pmfs[i].startNs > w.startNs {
		i--
	}
	if i < 0 || pmfs[i].input == nil || pmfs[i].output == nil {
		return fmt.Errorf("window_start_s: no token distribution in the dataset for window %d s", w.startNs/1e9)
	}
	w.input, w.output = pmfs[i].input, pmfs[i].output
	return nil
}

// readServeGenTrace reads every window row; the last window lasts as long
// as the one before it (600 s in the published files).
func readServeGenTrace(r io.Reader, file string) ([]serveGenWindow, error) {
	cr := csv.NewReader(newLineCapped(newSizeCapped(r, file), file))
	cr.FieldsPerRecord = 6
	var rows []serveGenWindow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, (&sequencer{file: file}).csvError(err)
		}
		line, _ := cr.FieldPos(0)
		w, err := parseServeGenRow(rec, file, line)
		if err != nil {
			return nil, err
		}
		if n := len(rows); n > 0 {
			if w.startNs <= rows[n-1].startNs {
				return nil, &ParseError{File: file, Line: line, Field: "window_start_s", Msg: "windows must be in increasing order"}
			}
			rows[n-1].lengthNs = w.startNs - rows[n-1].startNs
		}
		rows = append(rows, w)
	}
	if len(rows) == 0 {
		return nil, &ParseError{File: file, Msg: "no windows"}
	}
	last := &rows[len(rows)-1]
	last.lengthNs = 600e9
	if len(rows) > 1 {
		last.lengthNs = rows[len(rows)-2].lengthNs
	}
	return rows, nil
}

func parseServeGenRow(rec []string, file string, line int) (serveGenWindow, error) {
	bad := func(field, v string) error {
		return &ParseError{File: file, Line: line, Field: field, Msg: quote(v) + " is not a non-negative number"}
	}
	num := func(field, v string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0) || f > 1e9 {
			return 0, bad(field, v)
		}
		return f, nil
	}
	start, err := num("window_start_s", rec[0])
	if err != nil {
		return serveGenWindow{}, err
	}
	rate, err := num("rate_rps", rec[1])
	if err != nil {
		return serveGenWindow{}, err
	}
	shape, err := num("p1", rec[4])
	if err != nil || (rate > 0 && rec[3] != "" && (shape < 0.01 || shape > 1000)) {
		return serveGenWindow{}, bad("p1", rec[4])
	}
	return serveGenWindow{line: line, startNs: int64(start * 1e9), rate: rate, shape: shape,
		family: strings.TrimSpace(rec[3])}, nil
}

// selectWindows returns the windows whose start seconds are listed, in the
// listed order (all of them when none are).
func selectWindows(rows []serveGenWindow, file string, starts []int) ([]serveGenWindow, error) {
	if len(starts) == 0 {
		return rows, nil
	}
	out := make([]serveGenWindow, 0, len(starts))
	for _, s := range starts {
		i := slices.IndexFunc(rows, func(w serveGenWindow) bool { return w.startNs == int64(s)*1e9 })
		if i < 0 {
			return nil, &ParseError{File: file, Field: "window_start_s", Msg: fmt.Sprintf("no window starts at %d s", s)}
		}
		out = append(out, rows[i])
	}
	return out, nil
}

// serveGenPMF holds one dataset window's length distributions (nil if empty).
type serveGenPMF struct {
	startNs       int64
	input, output *lengthSampler
}

// readServeGenDataset reads the dataset JSON: {"<start s>": {"input_tokens":
// "{45: 0.0096, …}", "output_tokens": "{…}", …}}, PMFs written as Python
// dict literals. It returns the windows sorted by start.
func readServeGenDataset(r io.Reader, file string) ([]serveGenPMF, error) {
	var raw map[string]struct {
		Input  string `json:"input_tokens"`
		Output string `json:"output_tokens"`
	}
	if err := json.NewDecoder(newSizeCapped(r, file)).Decode(&raw); err != nil {
		if pe := (*ParseError)(nil); errors.As(err, &pe) {
			return nil, pe
		}
		return nil, &ParseError{File: file, Msg: "not a JSON object of windows with input_tokens and output_tokens strings"}
	}
	var out []serveGenPMF
	for key, w := range raw {
		start, err := strconv.Atoi(key)
		if err != nil || start < 0 {
			return nil, &ParseError{File: file, Field: strconv.Quote(key), Msg: "window key is not a start time in seconds"}
		}
		p := serveGenPMF{startNs: int64(start) * 1e9}
		if p.input, err = parsePMF(w.Input); err != nil {
			return nil, &ParseError{File: file, Field: key + ".input_tokens", Msg: err.Error()}
		}
		if p.output, err = parsePMF(w.Output); err != nil {
			return nil, &ParseError{File: file, Field: key + ".output_tokens", Msg: err.Error()}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b serveGenPMF) int { return cmp.Compare(a.startNs, b.startNs) })
	return out, nil
}

// parsePMF parses "{45: 0.0096, 46: 0.0117}" into an empirical sampler (nil
// for "{}"). Token counts of 0 are raised to 1.
func parsePMF(s string) (*lengthSampler, error) {
	body := strings.TrimSpace(s)
	if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
		return nil, fmt.Errorf("%.40q is not a {tokens: probability} map", s)
	}
	body = strings.TrimSpace(body[1 : len(body)-1])
	if body == "" {
		return nil, nil
	}
	l := Length{Dist: DistEmpirical}
	for _, item := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(item, ":")
		n, err1 := strconv.Atoi(strings.TrimSpace(k))
		p, err2 := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("entry %.40q is not tokens: probability", item)
		}
		l.Values = append(l.Values, max(n, 1))
		l.Weights = append(l.Weights, p)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return newLengthSampler(l), nil
}
