package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// pdSpace is a prefill/decode space: prefill on two variants, decode on one.
func pdSpace() Space {
	return Space{Pools: []PoolSpace{
		{Name: "prefill", MinCount: 1, MaxCount: 8, Variants: []Variant{
			{Hardware: "h100", TP: 1, CostPerHour: 3}, {Hardware: "h200", TP: 1, CostPerHour: 4}}},
		{Name: "decode", MinCount: 1, MaxCount: 8, Variants: []Variant{{Hardware: "h100", TP: 1, CostPerHour: 3}}},
	}}
}

// TestCheapestByHand: serving 10 req/s needs prefill capacity ≥ 10 (h100 3
// req/s, h200 5 req/s per instance) and decode capacity ≥ 10 (2.5 req/s per
// instance). Decode needs 4 × $3 = $12. Prefill: 4 h100 = $12 or 2 h200 =
// $8, so the answer is 2 h200 + 4 h100 decoders = $20.
func TestCheapestByHand(t *testing.T) {
	s := pdSpace()
	perInstance := [][]float64{{3, 5}, {2.5}}
	meets := func(f Fleet) (bool, error) {
		for i := range f.Count {
			if float64(f.Count[i])*perInstance[i][f.Variant[i]] < 10 {
				return false, nil
			}
		}
		return true, nil
	}
	for name, search := range map[string]func(FleetFunc, int) (Choice, error){"cheapest": s.Cheapest, "grid": s.Grid} {
		c, err := search(meets, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Describe(c.Fleet); !c.Found || c.CostPerHour != 20 || got != "prefill 2×h200/tp1 + decode 4×h100/tp1" {
			t.Errorf("%s: got %s at $%g (found %v), want 2 h200 + 4 decoders at $20", name, got, c.CostPerHour, c.Found)
		}
		t.Logf("%s: %d runs", name, c.Runs)
	}
}

// randomSpace draws a space of 1–3 pools with 1–3 variants and counts in 1..6.
func randomSpace(r *rand.Rand) Space {
	var s Space
	for i := range 1 + r.IntN(3) {
		p := PoolSpace{Name: fmt.Sprint("pool", i), MinCount: 1 + r.IntN(2), MaxCount: 3 + r.IntN(4)}
		for j := range 1 + r.IntN(3) {
			// Whole-dollar prices make ties common, which exercises the tie-break.
			p.Variants = append(p.Variants, Variant{Hardware: fmt.Sprint("hw", j), TP: 1 + r.IntN(2), CostPerHour: float64(1 + r.IntN(4))})
		}
		s.Pools = append(s.Pools, p)
	}
	return s
}

// randomMonotone draws a function that is non-decreasing in every count:
// per variant a capacity per instance, and either every pool must carry the
// load (a bottleneck) or their log-capacities must add up (a trade-off).
func randomMonotone(r *rand.Rand, s Space) FleetFunc {
	capacity := make([][]float64, len(s.Pools))
	for i, p := range s.Pools {
		for range p.Variants {
			capacity[i] = append(capacity[i], 0.5+3*r.Float64())
		}
	}
	load, tradeOff := 1+8*r.Float64(), r.IntN(2) == 0
	return func(f Fleet) (bool, error) {
		sum, least := 0.0, math.Inf(1)
		for i := range f.Count {
			c := float64(f.Count[i]) * capacity[i][f.Variant[i]]
			sum, least = sum+math.Log(c), min(least, c)
		}
		if tradeOff {
			return sum >= math.Log(load)*float64(len(f.Count))/2, nil
		}
		return least >= load, nil
	}
}

// TestCheapestMatchesGrid checks on many random monotone cases that the
// pruned search finds the grid's answer with no more runs.
func TestCheapestMatchesGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var cheapRuns, gridRuns int
	for k := range 500 {
		s := randomSpace(r)
		meets := randomMonotone(r, s)
		want, err := s.Grid(meets, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Cheapest(meets, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found != want.Found || got.Found && (s.Describe(got.Fleet) != s.Describe(want.Fleet)) {
			t.Fatalf("case %d: cheapest %s ($%g, found %v), grid %s ($%g, found %v)", k,
				s.Describe(got.Fleet), got.CostPerHour, got.Found, s.Describe(want.Fleet), want.CostPerHour, want.Found)
		}
		if got.Runs > want.Runs {
			t.Errorf("case %d: %d runs, more than the grid's %d", k, got.Runs, want.Runs)
		}
		cheapRuns, gridRuns = cheapRuns+got.Runs, gridRuns+want.Runs
	}
	t.Logf("runs: pruned %d, grid %d", cheapRuns, gridRuns)
	if 3*cheapRuns > gridRuns {
		t.Errorf("pruned search ran %d fleets, more than a third of the grid's %d", cheapRuns, gridRuns)
	}
}

func TestCheapestNoneMeets(t *testing.T) {
	s := pdSpace()
	c, err := s.Cheapest(func(Fleet) (bool, error) { return false, nil }, 0)
	// Per variant combination one run at the largest counts, 8×8, which fails.
	if err != nil || c.Found || c.Runs != 8*2 {
		t.Errorf("got %+v, %v; want not found after 16 runs", c, err)
	}
}

func TestCheapestRunLimitAndErrors(t *testing.T) {
	s := pdSpace()
	c, err := s.Cheapest(func(f Fleet) (bool, error) { return true, nil }, 3)
	if !errors.Is(err, ErrRunBudget) || c.Runs != 3 || !c.Found {
		t.Errorf("got %+v, %v; want the run limit after 3 runs with a fleet found", c, err)
	}
	boom := errors.New("boom")
	if _, err := s.Grid(func(Fleet) (bool, error) { return false, boom }, 0); !errors.Is(err, boom) {
		t.Errorf("grid: got %v, want boom", err)
	}
}
