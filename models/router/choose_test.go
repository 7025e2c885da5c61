package router

import (
	"math"
	"testing"
)

func TestSoftmaxProbs(t *testing.T) {
	e := math.Exp
	tests := []struct {
		name    string
		costs   []float64
		t       float64
		weights []float64 // unnormalised
	}{
		// Normalised costs 0, 1/2, 1.
		{"T=1", []float64{0, 5, 10}, 1, []float64{1, e(-0.5), e(-1)}},
		{"T=0.5", []float64{0, 5, 10}, 0.5, []float64{1, e(-1), e(-2)}},
		// Shifting and scaling the costs changes nothing.
		{"affine", []float64{100, 150, 200}, 1, []float64{1, e(-0.5), e(-1)}},
		{"equal costs", []float64{3, 3, 3, 3}, 2, []float64{1, 1, 1, 1}},
		{"one", []float64{7}, 1, []float64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum := 0.0
			for _, w := range tc.weights {
				sum += w
			}
			got := SoftmaxProbs(nil, tc.costs, tc.t)
			for i, w := range tc.weights {
				if !near(got[i], w/sum) {
					t.Fatalf("probs %v, want weights %v / %g", got, tc.weights, sum)
				}
			}
		})
	}
}

func TestSoftmaxProbsPanicsOnZeroTemperature(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	SoftmaxProbs(nil, []float64{1}, 0)
}

func TestChooserDrawsMatchProbabilities(t *testing.T) {
	ch := chooser{rng: seeded()}
	costs := []float64{0, 5, 10}
	want := SoftmaxProbs(nil, costs, 0.5)
	const n = 100000
	counts := make([]int, len(costs))
	for range n {
		counts[ch.minCost(costs, 0.5)]++
	}
	for i := range want {
		if f := float64(counts[i]) / n; math.Abs(f-want[i]) > 0.01 {
			t.Errorf("candidate %d drawn %.4f of the time, want %.4f", i, f, want[i])
		}
	}
}

func TestChooserWeightedAndMax(t *testing.T) {
	ch := chooser{rng: seeded()}
	const n = 100000
	counts := make([]int, 3)
	for range n {
		counts[ch.weighted([]float64{1, 0, 3})]++
	}
	if counts[1] != 0 || math.Abs(float64(counts[0])/n-0.25) > 0.01 {
		t.Errorf("weighted draws %v, want 1/4, 0, 3/4", counts)
	}
	zero := make([]int, 2)
	for range 1000 {
		zero[ch.weighted([]float64{0, 0})]++
	}
	if zero[0] == 0 || zero[1] == 0 {
		t.Errorf("all-zero scores drew %v, want both", zero)
	}
	for range 100 {
		if got := ch.maxScore([]float64{1, 4, 2}); got != 1 {
			t.Fatalf("max score picked %d, want 1", got)
		}
	}
}
