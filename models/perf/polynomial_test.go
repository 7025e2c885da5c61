package perf

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

const distServeFile = "../../scenarios/profiles/distserve/profiler-a100-80g.distserve.json"

func readDistServe(t *testing.T, model string, tp int) PolyCoeffs {
	t.Helper()
	data, err := os.ReadFile(distServeFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseDistServe(bytes.NewReader(data), distServeFile, model, tp)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPolynomialOPT13B evaluates DistServe's published OPT-13B TP1
// coefficients by hand:
//
//	prefill (a, b, c) = (18.10254647, 0.10191226, 7.12226431e-06)
//	decode small      = (19.93470262, 6.26935652e-04, 0.03850698), batch < 95
//	decode large      = (7.16618895, 5.79800040e-04, 0.15831096), batch >= 95
func TestPolynomialOPT13B(t *testing.T) {
	p := NewPolynomial(readDistServe(t, "facebook/opt-13b", 1))
	tests := []struct {
		name   string
		b      Batch
		wantMs float64
	}{
		// prompts 512 and 1024: Σ = 1536, Σ² = 262,144 + 1,048,576 = 1,310,720:
		// 18.1025 + 0.101912·1536 + 7.1223e-6·1,310,720 = 183.975068 ms.
		{"prefill 512+1024", Batch{PrefillSeqs: 2, PrefillTokens: 1536, PrefillTokensSq: 1_310_720}, 183.975068},
		// 10 seqs, Σ ctx 10,000: 19.9347 + 6.2694 + 0.3851 = 26.589129 ms.
		{"decode 10", Batch{DecodeSeqs: 10, DecodeContext: 10_000}, 26.589129},
		// 94 seqs (below 95), Σ ctx 94,000: small coefficients → 82.486310 ms.
		{"decode 94", Batch{DecodeSeqs: 94, DecodeContext: 94_000}, 82.486310},
		// 95 seqs (at the threshold), Σ ctx 95,000: large → 77.286734 ms.
		{"decode 95", Batch{DecodeSeqs: 95, DecodeContext: 95_000}, 77.286734},
		// mixed: 183.975068 + 26.589129 − min(18.1025, 19.9347) = 192.461650 ms.
		{"mixed", Batch{PrefillSeqs: 2, PrefillTokens: 1536, PrefillTokensSq: 1_310_720,
			DecodeSeqs: 10, DecodeContext: 10_000}, 192.461650},
		{"empty", Batch{}, 0},
	}
	for _, tc := range tests {
		got := float64(p.StepNs(&tc.b)) / 1e6
		if math.Abs(got-tc.wantMs) > 1e-6 {
			t.Errorf("%s: %.6f ms, want %.6f", tc.name, got, tc.wantMs)
		}
	}
}

// TestPolynomialClampsNegative: vLLM's OPT-66B TP2 fit has c < 0, so far
// outside the fitted range the prefill time would go negative.
func TestPolynomialClampsNegative(t *testing.T) {
	p := NewPolynomial(PolyCoeffs{Prefill: [3]float64{58.4, 0.38, -7.1e-6}, DecodeBatchThreshold: 95})
	b := Batch{PrefillSeqs: 1, PrefillTokens: 100_000, PrefillTokensSq: 1e10}
	if got := p.StepNs(&b); got != 0 {
		t.Errorf("StepNs = %d, want clamp to 0 (StepMs %g)", got, p.StepMs(&b))
	}
}

func TestParseDistServeAllEntries(t *testing.T) {
	for _, f := range []string{"distserve", "vllm"} {
		file := "../../scenarios/profiles/distserve/profiler-a100-80g." + f + ".json"
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []struct {
			model string
			tps   []int
		}{{"facebook/opt-13b", []int{1, 2, 4}}, {"facebook/opt-66b", []int{2, 3, 4, 8}}} {
			for _, tp := range e.tps {
				c, err := ParseDistServe(bytes.NewReader(data), file, e.model, tp)
				if err != nil {
					t.Fatal(err)
				}
				if c.DecodeBatchThreshold != 95 || c.Prefill[0] <= 0 || c.DecodeSmall[1] <= 0 {
					t.Errorf("%s %s tp%d: implausible %+v", f, e.model, tp, c)
				}
			}
		}
	}
}

func TestParseDistServeErrors(t *testing.T) {
	good := `{"m": {"1": {"decoding_large_small_bs_threshold": 95, "prefill": [1, 2, 3],
 "decoding_smallbs": [1, 2, 3], "decoding_largebs": [1, 2, 3]}}}`
	tests := []struct {
		name, doc, model string
		tp               int
		want             string
	}{
		{"model", good, "x", 1, `f.json: no model "x" (have "m")`},
		{"tp", good, "m", 2, `f.json: model "m" has no tp 2 (have tp "1")`},
		{"syntax", "{\n\"m\": {\n\"1\": [}", "m", 1, "f.json:3:"},
		{"type", "{\"m\": {\n\"1\": {\"prefill\": \"x\"}}}", "m", 1, "f.json:2:"},
		{"len", strings.Replace(good, "[1, 2, 3],\n", "[1, 2],\n", 1), "m", 1, "field prefill: want 3"},
		{"threshold", strings.Replace(good, "95", "0", 1), "m", 1, "decoding_large_small_bs_threshold"},
	}
	for _, tc := range tests {
		_, err := ParseDistServe(strings.NewReader(tc.doc), "f.json", tc.model, tc.tp)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseDistServe(f *testing.F) {
	data, err := os.ReadFile(distServeFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, "facebook/opt-13b", 1)
	f.Add([]byte(`{"m":{"1":{"prefill":[1,2,3]}}}`), "m", 1)
	f.Add([]byte(`{`), "m", 0)
	f.Fuzz(func(t *testing.T, doc []byte, model string, tp int) {
		c, err := ParseDistServe(bytes.NewReader(doc), "fuzz.json", model, tp)
		if err == nil && c.DecodeBatchThreshold < 1 {
			t.Errorf("accepted threshold %d", c.DecodeBatchThreshold)
		}
	})
}
