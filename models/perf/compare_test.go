package perf

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

var update = flag.Bool("update", false, "rewrite docs/STEPTIME.md from the comparison")

const stepTimeDoc = "../../docs/STEPTIME.md"

// mbuCap is the MBU a tuned decode kernel plausibly reaches; the doc also
// reports the fit constrained to it.
const mbuCap = 0.9

// splitwiseDevices maps Splitwise's hardware names to catalog accelerators.
var splitwiseDevices = []struct{ profile, catalog string }{
	{"a100-80gb", "a100-80gb"},
	{"h100-80gb", "h100-sxm"},
}

// point is one measured (hardware, TP, batch, prompt, token size) point,
// the mean of its repeats.
type point struct {
	hw                           string // profile hardware name
	tp, batch, prompt, tokenSize int
	prefillMs, decodeMs          float64
	excluded                     bool
	prefillBatch, decodeBatch    Batch
	predPrefillMs, predDecodeMs  float64 // with catalog factors
	fitPrefillMs, fitDecodeMs    float64 // with fitted factors
}

// comparePoints averages Splitwise's llama2-70b rows on the two devices.
func comparePoints(rows []ProfileRow) []*point {
	type key struct {
		hw                       string
		tp, batch, prompt, token int
	}
	byKey := map[key]*point{}
	count := map[key]float64{}
	var keys []key
	for _, r := range rows {
		if r.Model != "llama2-70b" || (r.Hardware != "a100-80gb" && r.Hardware != "h100-80gb") {
			continue
		}
		k := key{r.Hardware, r.TP, r.BatchSize, r.PromptSize, r.TokenSize}
		p := byKey[k]
		if p == nil {
			p = &point{hw: r.Hardware, tp: r.TP, batch: r.BatchSize, prompt: r.PromptSize, tokenSize: r.TokenSize}
			byKey[k] = p
			keys = append(keys, k)
		}
		p.prefillMs += r.PromptTimeMs
		p.decodeMs += r.TokenTimeMs
		count[k]++
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.hw != b.hw {
			return a.hw < b.hw
		}
		if a.tp != b.tp {
			return a.tp < b.tp
		}
		if a.batch != b.batch {
			return a.batch < b.batch
		}
		if a.prompt != b.prompt {
			return a.prompt < b.prompt
		}
		return a.token < b.token
	})
	pts := make([]*point, len(keys))
	for i, k := range keys {
		p := byKey[k]
		p.prefillMs /= count[k]
		p.decodeMs /= count[k]
		p.prefillBatch, p.decodeBatch = ProfileSteps(p.batch, p.prompt)
		pts[i] = p
	}
	markNonMonotone(pts)
	return pts
}

// markNonMonotone excludes points whose prefill is faster than a smaller
// batch of the same prompt on the same hardware and TP: twice the work in
// less time is a failed run, not a measurement.
func markNonMonotone(pts []*point) {
	for _, p := range pts {
		for _, q := range pts {
			if q.hw == p.hw && q.tp == p.tp && q.prompt == p.prompt && q.batch < p.batch && q.prefillMs > p.prefillMs {
				p.excluded = true
			}
		}
	}
}

// factors are the efficiency factors the roofline takes from the catalog.
type factors struct {
	mfu, mbu   float64
	overheadNs int64
}

// deviceSetup is one profiled device with its catalog entry and link.
type deviceSetup struct {
	profile     string
	dev         hardware.Accelerator
	link        hardware.Link
	catalog     factors
	fitted      factors
	capped      factors  // fitted with MBU <= mbuCap
	cappedStats errStats // all-point error with capped
	pts         []*point // included and excluded points of this device
}

func newRooflineFor(t testing.TB, m *llm.Model, d *deviceSetup, tp int, f factors) *Roofline {
	cfg := RooflineConfig{Model: m, Device: d.dev, Layout: parallel.Tensor(tp), ScaleUp: d.link,
		MFU: f.mfu, MBU: f.mbu, StepOverheadNs: f.overheadNs}
	return mustRoofline(t, cfg)
}

// predict fills the predictions of d's points for factors f.
func predict(t testing.TB, m *llm.Model, d *deviceSetup, f factors, fitted bool) {
	rl := map[int]*Roofline{}
	for _, p := range d.pts {
		r := rl[p.tp]
		if r == nil {
			r = newRooflineFor(t, m, d, p.tp, f)
			rl[p.tp] = r
		}
		pre, dec := float64(r.StepNs(&p.prefillBatch))/1e6, float64(r.StepNs(&p.decodeBatch))/1e6
		if fitted {
			p.fitPrefillMs, p.fitDecodeMs = pre, dec
		} else {
			p.predPrefillMs, p.predDecodeMs = pre, dec
		}
	}
}

func TestSplitwiseComparison(t *testing.T) {
	m := catalogModel(t, "llama-2-70b")
	pts := comparePoints(readSplitwise(t))
	var devs []*deviceSetup
	for _, sd := range splitwiseDevices {
		dev, link := catalogDevice(t, sd.catalog)
		d := &deviceSetup{profile: sd.profile, dev: dev, link: link,
			catalog: factors{dev.MFU, dev.MBU, dev.StepOverheadNs}}
		for _, p := range pts {
			if p.hw == sd.profile {
				d.pts = append(d.pts, p)
			}
		}
		predict(t, m, d, d.catalog, false)
		d.capped = fitFactors(t, m, d, mbuCap)
		predict(t, m, d, d.capped, true)
		d.cappedStats = stats(d, 0, "", true)
		d.fitted = fitFactors(t, m, d, 1)
		predict(t, m, d, d.fitted, true)
		devs = append(devs, d)
	}
	got := renderStepTimeDoc(devs)
	if *update {
		if err := os.WriteFile(stepTimeDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(stepTimeDoc)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s is stale (rerun with -update): %s", stepTimeDoc, firstDiff(string(want), got))
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  file: %s\n  now:  %s", i+1, w, g)
		}
	}
	return "no line differs"
}

// errStats is the error of predictions against measurements.
type errStats struct {
	n          int
	mape, bias float64 // mean |pred−meas|/meas and mean (pred−meas)/meas
}

func (s *errStats) add(pred, meas float64) {
	e := (pred - meas) / meas
	s.n++
	s.mape += math.Abs(e)
	s.bias += e
}

func (s errStats) mean() errStats {
	if s.n == 0 {
		return s
	}
	return errStats{s.n, s.mape / float64(s.n), s.bias / float64(s.n)}
}

// stats returns the errors over d's included points with tp (0 = all) and
// phase ("prefill", "decode" or "" for both).
func stats(d *deviceSetup, tp int, phase string, fitted bool) errStats {
	var s errStats
	for _, p := range d.pts {
		if p.excluded || (tp != 0 && p.tp != tp) {
			continue
		}
		pre, dec := p.predPrefillMs, p.predDecodeMs
		if fitted {
			pre, dec = p.fitPrefillMs, p.fitDecodeMs
		}
		if phase != "decode" {
			s.add(pre, p.prefillMs)
		}
		if phase != "prefill" {
			s.add(dec, p.decodeMs)
		}
	}
	return s.mean()
}

func pct(x float64) string { return fmt.Sprintf("%+.0f%%", 100*x) }

func catalogName(d *deviceSetup) string {
	return strings.TrimSpace(d.dev.Name)
}
