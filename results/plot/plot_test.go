package plot

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
)

var outDir = flag.String("plot.out", "", "also write the test plots into this `DIR`, to look at them")

// fixtureCurves are three configurations whose attainment falls off a
// logistic cliff at 4, 6 and 8 req/s.
func fixtureCurves() []Curve {
	var curves []Curve
	for k, capRPS := range []float64{4, 6, 8} {
		c := Curve{Name: []string{"decode.count=2", "decode.count=3", "decode.count=4"}[k]}
		for rate := 1.0; rate <= 10; rate++ {
			att := 1 / (1 + math.Exp(2*(rate-capRPS)))
			c.Points = append(c.Points, CurvePoint{Rate: rate, Attainment: att, RequestGoodputRPS: rate * att})
		}
		curves = append(curves, c)
	}
	return curves
}

// gridCurves are fixtureCurves as a 2 × 2 grid of settings under a
// legend title, plus a fourth curve.
func gridCurves() []Curve {
	curves := append(fixtureCurves(), fixtureCurves()[0])
	for i := range curves {
		curves[i].Name = []string{"h100, 2", "h100, 4", "b200, 2", "b200, 4"}[i]
		curves[i].LegendTitle = "decode.hardware, decode.count"
		curves[i].Hue, curves[i].Variant = i/2, i%2
	}
	curves[3].Points = curves[3].Points[:5]
	return curves
}

// fixtureCDF is two lognormal latency samples, medians 120 and 200 ms.
func fixtureCDF() []CDFSeries {
	r := rand.New(rand.NewPCG(1, 2))
	var out []CDFSeries
	for _, medianS := range []float64{0.12, 0.2} {
		s := CDFSeries{Name: "median " + trimFloat(medianS*1e3) + " ms"}
		for range 2000 {
			s.ValuesS = append(s.ValuesS, medianS*math.Exp(0.5*r.NormFloat64()))
		}
		out = append(out, s)
	}
	return out
}

func fixtureAttribution() []AttributionBar {
	a := results.Attribution{
		TTFTS: map[string]float64{"router_queue": 0.001, "prefill_queue": 0.055, "prefill_compute": 0.054,
			"transfer": 0.0125, "decode_queue_first": 0.015},
		DecodeS: map[string]float64{"decode_compute": 0.55, "decode_queue": 0.025, "rejection": 0.1,
			"reprefill": 0.075, "swap": 0},
	}
	b := a
	b.TTFTS = map[string]float64{"prefill_queue": 0.2, "prefill_compute": 0.054, "transfer": 0.03}
	return []AttributionBar{ComponentBar("decode.count=2", a), ComponentBar("decode.count=4", b)}
}

// fixtureTimeline fills and drains the KV cache three times, preempting
// at each peak.
func fixtureTimeline() InstanceTimeline {
	in := InstanceTimeline{Name: "decode-0", Pool: "decode", MaxSeqs: 48}
	for i := range 3000 {
		t := float64(i) * 0.01
		phase := math.Mod(t, 10) / 10
		in.Samples = append(in.Samples, Sample{TimeS: t, KVUsed: math.Min(1, 1.1*phase), Batch: min(48, int(64*phase)),
			Waiting: max(0, int(64*phase)-48)})
		if phase > 0.92 && i%7 == 0 {
			in.PreemptionS = append(in.PreemptionS, t)
		}
	}
	return in
}

func fixtureCosts() []CostPoint {
	return []CostPoint{
		{Label: "1P:1D h100", CostPerH: 16, RequestGoodputRPS: 3}, {Label: "1P:2D h100", CostPerH: 24, RequestGoodputRPS: 5.5},
		{Label: "2P:2D h100", CostPerH: 32, RequestGoodputRPS: 6}, {Label: "1P:3D h100", CostPerH: 32, RequestGoodputRPS: 7.5, Chosen: true},
		{Label: "2P:4D h100", CostPerH: 48, RequestGoodputRPS: 9}, {Label: "1P:1D b200", CostPerH: 30, RequestGoodputRPS: 5},
		{Label: "2P:3D b200", CostPerH: 75, RequestGoodputRPS: 12}, {Label: "2P:2D b200", CostPerH: 60, RequestGoodputRPS: 8},
	}
}

// drawers is every plot over its fixture.
var drawers = map[string]func(*bytes.Buffer, Format) error{
	"attainment":      func(b *bytes.Buffer, f Format) error { return Attainment(b, f, fixtureCurves(), 0.9) },
	"request_goodput": func(b *bytes.Buffer, f Format) error { return RequestGoodput(b, f, fixtureCurves()) },
	"ttft_cdf":        func(b *bytes.Buffer, f Format) error { return LatencyCDF(b, f, fixtureCDF(), 0.25, "TTFT") },
	"attribution":     func(b *bytes.Buffer, f Format) error { return Attribution(b, f, fixtureAttribution()) },
	"attribution_keyed": func(b *bytes.Buffer, f Format) error {
		return attributionChart(b, f, fixtureAttribution(), "pools.decode.count, pools.decode.hardware")
	},
	"attainment_grid": func(b *bytes.Buffer, f Format) error { return Attainment(b, f, gridCurves(), 0.9) },
	"timeline":        func(b *bytes.Buffer, f Format) error { return Timeline(b, f, fixtureTimeline()) },
	"pool_timeline": func(b *bytes.Buffer, f Format) error {
		a, c := fixtureTimeline(), fixtureTimeline()
		for i := range c.Samples {
			c.Samples[i].KVUsed /= 2
		}
		return PoolTimeline(b, f, "decode", []InstanceTimeline{a, c})
	},
	"pareto": func(b *bytes.Buffer, f Format) error { return Pareto(b, f, fixtureCosts()) },
	"throughput_interactivity": func(b *bytes.Buffer, f Format) error {
		return ThroughputInteractivity(b, f, fixtureTI(), "GPU")
	},
}

func TestPlotsRender(t *testing.T) {
	for name, draw := range drawers {
		for _, f := range []Format{PNG, SVG} {
			var buf bytes.Buffer
			if err := draw(&buf, f); err != nil {
				t.Fatalf("%s.%s: %v", name, f, err)
			}
			checkImage(t, name+"."+string(f), f, buf.Bytes())
			if *outDir != "" {
				if err := os.WriteFile(filepath.Join(*outDir, name+"."+string(f)), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// checkImage fails unless b starts like an image of format f and is not
// trivially small.
func checkImage(t *testing.T, name string, f Format, b []byte) {
	t.Helper()
	ok := len(b) > 2000
	switch f {
	case PNG:
		ok = ok && bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n"))
	case SVG:
		ok = ok && strings.Contains(string(b[:min(len(b), 400)]), "<svg")
	}
	if !ok {
		t.Errorf("%s: not a plausible %s image (%d bytes)", name, f, len(b))
	}
}
