package engine

import (
	"math"
	"testing"
)

func newSpec(t *testing.T, blocks int, spec Speculative) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: 8192, MaxSeqs: 256, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, PrefixCaching: true, Spec: spec}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// expectedPerStep is 1 + Σ_i Π_{j≤i} a_j: the mean tokens a verify step
// yields per sequence.
func expectedPerStep(a []float64) float64 {
	e, p := 1.0, 1.0
	for _, x := range a {
		p *= x
		e += p
	}
	return e
}

// TestSpecTokensPerStepClosedForm runs many sequences through verify steps
// and compares the tokens per sequence step with 1 + Σ_i Π_{j≤i} a_j,
// within 5 standard errors of the sample mean.
func TestSpecTokensPerStepClosedForm(t *testing.T) {
	for _, a := range [][]float64{{0.85}, {0.8, 0.7, 0.6}, {1, 1}, {0, 0.9}, {0.73, 0.71, 0.68, 0.5, 0.3}} {
		k := len(a)
		in := newSpec(t, 1<<16, Speculative{Tokens: k, Lookahead: true, Accept: a, Seed: 7})
		for id := range 200 {
			in.Enqueue(seq(in, uint64(id+1), 32, 1<<20), 0) // 200 prompts in one step's budget
		}
		step(t, in, 1) // prefill: first tokens
		const steps = 50
		before := in.Stats().DecodeTokens
		for i := range steps {
			step(t, in, int64(i+2))
		}
		n := float64(200 * steps)
		mean := float64(in.Stats().DecodeTokens-before) / n
		// A yield lies in [1, k+1], so its standard deviation is at most
		// k/2 and the mean's standard error at most k/(2√n).
		tol := 5 * float64(k) / (2 * math.Sqrt(n))
		if want := expectedPerStep(a); math.Abs(mean-want) > tol {
			t.Errorf("a=%v: %.4f tokens per sequence step, want %.4f ± %.4f", a, mean, want, tol)
		}
		st := in.Stats().Spec
		if st.Drafts != int64(n) || st.DraftTokens != int64(n)*int64(k) {
			t.Errorf("a=%v: %+v, want %v drafts of %d tokens", a, st, n, k)
		}
		if got := 1 + float64(st.Accepted)/float64(st.Drafts); math.Abs(got-mean) > 1e-9 {
			t.Errorf("a=%v: mean accepted length %.4f from the counters, %.4f from the tokens", a, got, mean)
		}
		check(t, in)
	}
}

// TestSpecVerifyStepBatchAndLookahead checks a verify step's batch (one
// decode token and k drafts per sequence) and the blocks it takes: the
// context, the drafts and, for a drafter that writes KV ahead, k
// lookahead slots (vLLM's allocate_slots); rejected drafts give their
// positions back.
func TestSpecVerifyStepBatchAndLookahead(t *testing.T) {
	for look, wantBlocks := range map[bool]int{false: 2, true: 3} {
		in := newSpec(t, 1000, Speculative{Tokens: 3, Lookahead: look, Accept: []float64{0, 0, 0}, Seed: 1})
		s := seq(in, 1, 26, 100)
		in.Enqueue(s, 0)
		step(t, in, 1) // prefill 26 tokens, sample one: 27 tokens, 26 computed
		if s.Blocks() != 2 {
			t.Fatalf("lookahead %v: %d blocks after the prefill, want 2 (a new prompt reserves no lookahead)", look, s.Blocks())
		}
		b, _ := in.Schedule(0)
		if b.DecodeSeqs != 1 || b.DecodeContext != 27 || b.SpecTokens != 3 || b.SpecAttn != 3*27+6 || b.PrefillSeqs != 0 {
			t.Fatalf("lookahead %v: verify batch %+v, want 1 decode over 27 tokens and 3 drafts attending 87 pairs", look, *b)
		}
		// 26 computed + 1 + 3 drafts = 30 slots, + 3 lookahead = 33.
		if s.Blocks() != wantBlocks {
			t.Fatalf("lookahead %v: %d blocks, want %d", look, s.Blocks(), wantBlocks)
		}
		in.Complete(2, 2) // every draft rejected: one token
		if s.Generated != 2 || s.computed != 27 {
			t.Fatalf("lookahead %v: generated %d computed %d, want 2 and 27", look, s.Generated, s.computed)
		}
		check(t, in)
	}
}

// TestSpecStopsAtMaxNew: accepted drafts past a sequence's last token are
// counted but not delivered.
func TestSpecStopsAtMaxNew(t *testing.T) {
	in := newSpec(t, 1000, Speculative{Tokens: 4, Lookahead: true, Accept: []float64{1, 1, 1, 1}, Seed: 1})
	s := seq(in, 1, 30, 7)
	in.Enqueue(s, 0)
	step(t, in, 1) // token 1
	// Tokens 2..6 arrive together: one gap (a client's one chunk), four
	// drafted tokens beside it.
	if res := step(t, in, 2); len(res.TokenGapsNs) != 1 || res.TokenGapsNs[0] != 1 || res.DraftedTokens != 4 {
		t.Fatalf("gaps %v, drafted %d; want one gap of 1 ns and 4 drafted tokens", res.TokenGapsNs, res.DraftedTokens)
	}
	res := step(t, in, 3) // token 7 and the end, 4 more accepted
	if s.Generated != 7 || len(res.Finished) != 1 || res.DraftedTokens != 0 {
		t.Fatalf("generated %d, finished %d, drafted delivered %d; want 7, 1, 0", s.Generated, len(res.Finished), res.DraftedTokens)
	}
	if st := in.Stats().Spec; st.Drafts != 2 || st.Accepted != 8 {
		t.Fatalf("%+v, want 2 drafts with 8 accepted", st)
	}
	if in.Pool().UsedBlocks() != 0 {
		t.Fatalf("%d blocks still used", in.Pool().UsedBlocks())
	}
	check(t, in)
}
