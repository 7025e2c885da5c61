package plot

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestParetoFront(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		points []CostPoint
		want   []int
	}{
		// 2 (32 $/h, 6) loses to 3 (32, 7.5); 5 (30, 5) to 1 (24, 5.5);
		// 7 (60, 8) to 4 (48, 9).
		{"fixture", fixtureCosts(), []int{0, 1, 3, 4, 6}},
		{"equal points: the first", []CostPoint{{CostPerH: 1, RequestGoodputRPS: 1}, {CostPerH: 1, RequestGoodputRPS: 1}}, []int{0}},
		{"same cost: the faster", []CostPoint{{CostPerH: 1, RequestGoodputRPS: 1}, {CostPerH: 1, RequestGoodputRPS: 2}}, []int{1}},
		{"same goodput: the cheaper", []CostPoint{{CostPerH: 2, RequestGoodputRPS: 1}, {CostPerH: 1, RequestGoodputRPS: 1}}, []int{1}},
		{"non-finite left out", []CostPoint{{CostPerH: nan, RequestGoodputRPS: 9}, {CostPerH: 1, RequestGoodputRPS: math.Inf(1)},
			{CostPerH: 3, RequestGoodputRPS: 1}}, []int{2}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		if got := ParetoFront(tt.points); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string // the labelled ticks
	}{
		{0, 100, "0 20 40 60 80 100"}, // raw step 20
		{1, 10, "2 4 6 8 10"},         // raw 1.8 → 2
		{0, 0.35, "0 0.1 0.2 0.3"},    // raw 0.07 → 0.1
		{-1, 1, "-1 -0.5 0 0.5 1"},    // raw 0.4 → 0.5; never "-0"
		{2.5, 12.5, "4 6 8 10 12"},    // raw 2 → 2
		{3, 3, "3"},                   // empty range: one tick
	}
	for _, tt := range tests {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tt.want {
			t.Errorf("Ticks(%g, %g) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"2", 2, true}, {"10/s", 10, true}, {" 600/min ", 10, true}, {"3600/h", 1, true}, {"1.5 /s", 1.5, true},
		{"fast", 0, false}, {"NaN", 0, false}, {"/s", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseRate(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseRate(%q) = %g, %v; want %g, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestShortNamesAndRateColumn(t *testing.T) {
	tests := []struct {
		paths []string
		short string
		rate  int
	}{
		{[]string{"pools.decode.count", "workload.rate_scale"}, "decode.count rate_scale", 1},
		{[]string{"pools.decode.count", "pools.prefill.count", "seed"}, "decode.count prefill.count seed", -1},
		{[]string{"a.x.y", "b.x.y", "router.policy"}, "a.x.y b.x.y policy", -1},
		{[]string{"pools.decode.engine.max_num_seqs"}, "decode.max_num_seqs", -1},
		{[]string{"router.rate_limit", "workload.rate"}, "rate_limit rate", 1}, // workload.* first
		{[]string{"workload.generator", "router.rate_limit"}, "generator rate_limit", 1},
	}
	for _, tt := range tests {
		if got := strings.Join(shortNames(tt.paths), " "); got != tt.short {
			t.Errorf("shortNames(%v) = %q, want %q", tt.paths, got, tt.short)
		}
		if got := rateColumn(tt.paths); got != tt.rate {
			t.Errorf("rateColumn(%v) = %d, want %d", tt.paths, got, tt.rate)
		}
	}
}

// TestSweepCurvesAveragesReplicas: two seeds per (count, rate) average
// into one point; the seed column does not split curves.
func TestSweepCurvesAveragesReplicas(t *testing.T) {
	tab := &sweepTable{path: "results.csv", varied: []string{"pools.decode.count", "workload.rate", "seed"},
		values: [][]string{{"1", "10/s", "1"}, {"1", "10/s", "2"}, {"1", "5/s", "1"}, {"2", "10/s", "1"}},
		lines:  []int{2, 3, 4, 5}, attainment: []float64{0.8, 0.6, 1, 0.9}, requestGoodputRPS: []float64{8, 6, 5, 9}}
	curves, err := sweepCurves(tab, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Curve{
		{Name: "decode.count=1", RateLabel: defaultRateLabel, Points: []CurvePoint{{10, 0.7, 7}, {5, 1, 5}}},
		{Name: "decode.count=2", RateLabel: defaultRateLabel, Points: []CurvePoint{{10, 0.9, 9}}},
	}
	if len(curves) != len(want) {
		t.Fatalf("got %d curves, want %d: %+v", len(curves), len(want), curves)
	}
	for i := range want {
		c, w := curves[i], want[i]
		if c.Name != w.Name || c.RateLabel != w.RateLabel || len(c.Points) != len(w.Points) {
			t.Fatalf("curve %d: got %+v, want %+v", i, c, w)
		}
		for k := range w.Points {
			g, e := c.Points[k], w.Points[k]
			if g.Rate != e.Rate || math.Abs(g.Attainment-e.Attainment) > 1e-12 || math.Abs(g.RequestGoodputRPS-e.RequestGoodputRPS) > 1e-12 {
				t.Errorf("curve %d point %d: got %+v, want %+v", i, k, g, e)
			}
		}
	}
	tab.values[2][1] = "soon"
	if _, err := sweepCurves(tab, 1); err == nil || !strings.Contains(err.Error(), "results.csv:4: column workload.rate") {
		t.Errorf("bad rate: got %v, want an error naming results.csv:4 and the column", err)
	}
}

func TestCDFXYs(t *testing.T) {
	got := cdfXYs([]float64{1, 2, 3}, 1000)
	want := []struct{ x, y float64 }{{1000, 0}, {1000, 1.0 / 3}, {2000, 2.0 / 3}, {3000, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, w := range want {
		if got[i].X != w.x || math.Abs(got[i].Y-w.y) > 1e-15 {
			t.Errorf("point %d: got %v, want %v", i, got[i], w)
		}
	}
	big := make([]float64, 100_003)
	for i := range big {
		big[i] = float64(i)
	}
	xys := cdfXYs(big, 1)
	if len(xys) > cdfSteps+2 || xys[len(xys)-1].X != 100_002 || xys[len(xys)-1].Y != 1 {
		t.Errorf("100003 values: %d points, last %v", len(xys), xys[len(xys)-1])
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X < xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("not monotone at %d: %v then %v", i, xys[i-1], xys[i])
		}
	}
}

// TestTimelineKeepsPeaks: 10 000 samples reduce to at most timelineSteps
// buckets, and the one 100 % spike survives.
func TestTimelineKeepsPeaks(t *testing.T) {
	samples := make([]Sample, 10_000)
	for i := range samples {
		samples[i] = Sample{TimeS: float64(i), KVUsed: 0.5, Batch: 8}
	}
	samples[4321].KVUsed, samples[4321].Batch, samples[4321].Waiting = 1, 99, 7
	kv, batch, waiting := timelineXYs(samples)
	if len(kv) > timelineSteps+1 || len(batch) != len(kv) || len(waiting) != len(kv) {
		t.Fatalf("%d KV, %d batch and %d waiting points", len(kv), len(batch), len(waiting))
	}
	maxKV, maxBatch, maxWaiting := 0.0, 0.0, 0.0
	for i := range kv {
		maxKV, maxBatch, maxWaiting = max(maxKV, kv[i].Y), max(maxBatch, batch[i].Y), max(maxWaiting, waiting[i].Y)
	}
	if maxKV != 100 || maxBatch != 99 || maxWaiting != 7 {
		t.Errorf("peaks lost: KV %g%%, batch %g, waiting %g", maxKV, maxBatch, maxWaiting)
	}
}

func TestUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := RequestGoodput(&buf, "gif", fixtureCurves()); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("got %v, want an error naming the format", err)
	}
}

// TestEmptyInputs: no data still renders a (blank) plot, without panics.
func TestEmptyInputs(t *testing.T) {
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"attainment":  func(b *bytes.Buffer) error { return Attainment(b, PNG, nil, 0.9) },
		"cdf":         func(b *bytes.Buffer) error { return LatencyCDF(b, PNG, []CDFSeries{{Name: "x"}}, 0, "TTFT") },
		"attribution": func(b *bytes.Buffer) error { return Attribution(b, PNG, nil) },
		"timeline":    func(b *bytes.Buffer) error { return Timeline(b, PNG, InstanceTimeline{}) },
		"pareto":      func(b *bytes.Buffer) error { return Pareto(b, PNG, nil) },
	} {
		var buf bytes.Buffer
		if err := draw(&buf); err != nil || buf.Len() == 0 {
			t.Errorf("%s: %v, %d bytes", name, err, buf.Len())
		}
	}
}

// TestBestCorner: a diagonal and a vertical line near the right edge
// leave only the top-left corner free for a 0.4 × 0.3 legend.
func TestBestCorner(t *testing.T) {
	p := newPlot("", "", "")
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	ink := []plotter.XYs{{{X: 0, Y: 0}, {X: 1, Y: 1}}, {{X: 0.9, Y: 0}, {X: 0.9, Y: 1}}}
	if got := bestCorner(p, ink, 0.4, 0.3, corner{top: false, left: false}); got != (corner{top: true, left: true}) {
		t.Errorf("got %+v, want top left", got)
	}
	if got := bestCorner(p, nil, 0.4, 0.3, corner{top: true, left: false}); got != (corner{top: true, left: false}) {
		t.Errorf("no ink: got %+v, want the preferred corner", got)
	}
}

// TestParetoLabelsKeepTheDifference: the front's labels drop the part
// every fleet on it shares, so that the decode pool's hardware — what
// tells these fleets apart — is not cut off at the label's length limit.
func TestParetoLabelsKeepTheDifference(t *testing.T) {
	prefill := "prefill 1×h100-sxm/tp4 + "
	points := []CostPoint{
		{Label: prefill + "decode 1×b200/tp4", CostPerH: 36, RequestGoodputRPS: 1.7},
		{Label: prefill + "decode 3×h100-sxm/tp4", CostPerH: 48, RequestGoodputRPS: 7.5},
		{Label: prefill + "decode 3×h200/tp4", CostPerH: 57.6, RequestGoodputRPS: 10.6, Chosen: true},
		{Label: prefill + "decode 6×h100-sxm/tp4", CostPerH: 84, RequestGoodputRPS: 10.4},
	}
	var b bytes.Buffer
	if err := Pareto(&b, SVG, points); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">decode 1×b200/tp4<", ">decode 3×h100-sxm/tp4<", ">decode 3×h200/tp4<"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no label %q in the SVG", want)
		}
	}
}
