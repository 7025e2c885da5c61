package workload

import (
	"math"
	"testing"

	"handoff/sim"
)

// drain reads src to the end (at most limit requests) and returns what it
// yielded and the error that ended it.
func drain(src sim.Source, limit int) ([]sim.Request, error) {
	var out []sim.Request
	for len(out) < limit {
		var r sim.Request
		ok, err := src.Next(&r)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// checkInvariants asserts the guarantees every source makes.
func checkInvariants(t testing.TB, reqs []sim.Request) {
	t.Helper()
	for i, r := range reqs {
		if r.ID != int64(i) {
			t.Fatalf("request %d has ID %d", i, r.ID)
		}
		if i > 0 && r.ArrivalNs < reqs[i-1].ArrivalNs {
			t.Fatalf("request %d arrives at %d, before %d", i, r.ArrivalNs, reqs[i-1].ArrivalNs)
		}
		if r.PromptTokens < 1 || r.OutputTokens < 1 {
			t.Fatalf("request %d: prompt %d, output %d", i, r.PromptTokens, r.OutputTokens)
		}
		seg := 0
		for _, s := range r.Prefix {
			if s.Tokens < 1 {
				t.Fatalf("request %d: empty segment %+v", i, s)
			}
			seg += s.Tokens
		}
		if seg > r.PromptTokens {
			t.Fatalf("request %d: segments hold %d tokens, prompt %d", i, seg, r.PromptTokens)
		}
	}
}

// meanStd returns the sample mean and standard deviation of xs.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)-1))
}
