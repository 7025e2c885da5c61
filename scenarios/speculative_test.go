package scenarios

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim"
)

// TestSpeculativeBadInput: each mistake in a speculative block is one
// error naming the file, the line and the field.
func TestSpeculativeBadInput(t *testing.T) {
	spec := func(s string) string { return minimal + "    speculative: {" + s + "}\n" }
	for doc, want := range map[string]string{
		spec("method: medusa, num_tokens: 2, acceptance: [0.5, 0.4]"): "m.yaml:13: field pools[0].speculative.method: unknown method \"medusa\"",
		spec("method: ngram, num_tokens: -1, acceptance: [0.5]"):      "m.yaml:13: field pools[0].speculative.num_tokens: must not be negative",
		spec("method: ngram, num_tokens: 2, acceptance: [0.5, 1.2]"):  "m.yaml:13: field pools[0].speculative.acceptance[1]: must be in [0, 1], got 1.2",
		spec("method: eagle, num_tokens: 2, acceptance: [0.5, 0.7]"):  "m.yaml:13: field pools[0].speculative.acceptance[1]: 0.7 exceeds the rate before it",
		spec("method: eagle, num_tokens: 3, acceptance: [0.5]"):       "field pools[0].speculative.acceptance: needs a rate for each of the 3 draft positions",
		spec("method: eagle3, num_tokens: 2, acceptance: nosuch"):     "field pools[0].speculative.acceptance: unknown set \"nosuch\"",
		spec("method: eagle, num_tokens: 1, acceptance: deepseek-v3-mtp"): "field pools[0].speculative.acceptance: set deepseek-v3-mtp was measured " +
			"with method mtp, not eagle",
		spec("method: eagle3, num_tokens: 4, acceptance: qwen3-8b-eagle3"):                 "set qwen3-8b-eagle3 has rates for 3 positions, num_tokens is 4",
		spec("method: draft_model, num_tokens: 2, acceptance: [0.5, 0.4]"):                 "field pools[0].speculative.draft_model: required with method draft_model",
		spec("method: eagle, num_tokens: 1, acceptance: [0.5], draft_model: llama-3.1-8b"): "field pools[0].speculative.draft_model: goes with method draft_model, not eagle",
		minimal + "    speculative: {method: ngram, num_tokens: 1, acceptance: {a: 1}}\n":  "m.yaml:13",
	} {
		if _, err := Parse([]byte(doc), "m.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}

// TestSpeculativeBadInputAtBuild: what the served model and the catalog
// decide is refused when the pool is built, naming the field.
func TestSpeculativeBadInputAtBuild(t *testing.T) {
	spec := func(s string) string { return minimal + "    speculative: {" + s + "}\n" }
	for doc, want := range map[string]string{
		spec("method: mtp, num_tokens: 1, acceptance: [0.8]"): "m.yaml:13: field pools[0].speculative.method: method mtp needs a model whose " +
			"checkpoint has MTP modules",
		spec("method: ngram, num_tokens: 129, acceptance: [" + strings.Repeat("0.5, ", 128) + "0.5]"): "field pools[0].speculative.num_tokens: " +
			"method ngram verifies at most 128 draft tokens per step",
		spec("method: draft_model, num_tokens: 1, acceptance: [0.5], draft_model: nosuch"):        "field pools[0].speculative.draft_model: unknown model",
		spec("method: draft_model, num_tokens: 1, acceptance: [0.5], draft_model: llama-3.1-70b"): "is not smaller than llama-3.1-8b",
		spec("method: draft_model, num_tokens: 1, acceptance: [0.5], draft_model: qwen2.5-7b"):    "a draft model must share the target's tokenizer",
		strings.Replace(minimal, "  - name: p\n", "  - name: pf\n    role: prefill\n    hardware: h100-sxm\n  - name: p\n    role: decode\n", 1) +
			"    speculative: {method: eagle, num_tokens: 1, acceptance: [0.5]}\n": "field pools[0].speculative: decode pool p drafts with eagle: its prefillers must run the same drafter",
	} {
		l, err := Parse([]byte(doc), "m.yaml")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if _, err := l.Build(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}

// runDoc builds and runs a scenario document.
func runDoc(t *testing.T, doc string) *sim.Result {
	t.Helper()
	l, err := Parse([]byte(doc), "m.yaml")
	res, _ := runLoaded(t, l, err)
	return res
}

// runLoaded builds and runs l, which loading returned with err, and
// returns the run and what the build made; any error fails the test.
func runLoaded(t testing.TB, l *Loaded, err error) (*sim.Result, *Built) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// TestSpeculativeOffIsToday: a speculative block with num_tokens 0 runs
// exactly as no block.
func TestSpeculativeOffIsToday(t *testing.T) {
	doc := strings.Replace(minimal, "requests: 5", "requests: 200", 1)
	doc = strings.Replace(doc, "rate: 1/s", "rate: 50/s", 1)
	doc = strings.Replace(doc, "value: 2}", "value: 300}", 1)
	base := runDoc(t, doc)
	off := runDoc(t, doc+"    speculative: {method: eagle, num_tokens: 0, acceptance: [0.5]}\n")
	if a, b := fmt.Sprint(base.Records, base.Instances), fmt.Sprint(off.Records, off.Instances); a != b {
		t.Fatal("num_tokens 0 changed the run")
	}
}

// TestSpeculativeShippedScenario runs deepseek-r1-pd-mtp.yaml, shortened:
// twice alike; its mean acceptance length near the closed form 1 + Σ_i
// Π_{j≤i} a_j of its set's rates; and its TPOT below the same fleet's
// without drafting.
func TestSpeculativeShippedScenario(t *testing.T) {
	raw, err := os.ReadFile("deepseek-r1-pd-mtp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(raw), "requests: 512", "requests: 96")
	a, b := runDoc(t, doc), runDoc(t, doc)
	if fmt.Sprint(a.Records) != fmt.Sprint(b.Records) {
		t.Fatal("two runs of one seed differ")
	}
	var drafts, accepted int64
	for _, in := range a.Instances {
		drafts, accepted = drafts+in.Stats.Spec.Drafts, accepted+in.Stats.Spec.Accepted
	}
	rates := acceptanceSets["deepseek-v3-mtp"].rates[:2]
	want := 1 + rates[0] + rates[0]*rates[1]
	// A yield lies in [1, 3]: the mean's standard error is at most 1/√n.
	if got, tol := 1+float64(accepted)/float64(drafts), 5/math.Sqrt(float64(drafts)); math.Abs(got-want) > tol {
		t.Errorf("mean acceptance length %.4f over %d drafts, want %.4f ± %.4f", got, drafts, want, tol)
	}
	off := runDoc(t, strings.ReplaceAll(doc, "num_tokens: 2", "num_tokens: 0"))
	if tpot, base := meanTPOT(a.Records), meanTPOT(off.Records); !(tpot < base/1.5) {
		t.Errorf("mean TPOT %.2f ms with MTP k=2, %.2f ms without: want at least 1.5× faster", tpot/1e6, base/1e6)
	}
}

func meanTPOT(recs []results.Record) float64 {
	var sum float64
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.OutputTokens > 1 && r.FinishNs > 0 {
			sum += float64(r.FinishNs-r.FirstTokenNs) / float64(r.OutputTokens-1)
			n++
		}
	}
	return sum / float64(n)
}
