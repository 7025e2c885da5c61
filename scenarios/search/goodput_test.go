package search

import (
	"errors"
	"math"
	"testing"
)

// threshold returns a meets function true up to t, recording the scales.
func threshold(t float64, seen *[]float64) MeetsFunc {
	return func(s float64) (bool, error) {
		*seen = append(*seen, s)
		return s <= t, nil
	}
}

func TestBisectionBrackets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		threshold float64
		b         Bisection
	}{
		{"above start", 3.7, Bisection{}},
		{"at start", 1, Bisection{}},
		{"below start", 0.3, Bisection{}},
		{"tight tolerance", 5.5, Bisection{Tolerance: 0.001, MaxRuns: 100}},
		{"other start", 40, Bisection{Start: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []float64
			br, err := tc.b.Search(threshold(tc.threshold, &seen))
			if err != nil {
				t.Fatal(err)
			}
			tol := tc.b.Tolerance
			if tol == 0 {
				tol = DefaultTolerance
			}
			if !br.Converged || !(br.Lo <= tc.threshold && tc.threshold < br.Hi) || br.Hi/br.Lo-1 >= tol {
				t.Errorf("threshold %g: got %+v, want converged Lo ≤ t < Hi within %g", tc.threshold, br, tol)
			}
			if br.Runs != len(seen) || hasRepeat(seen) {
				t.Errorf("runs %d, scales %v: want each scale once", br.Runs, seen)
			}
		})
	}
}

func hasRepeat(xs []float64) bool {
	for i := range xs {
		for j := range i {
			if xs[i] == xs[j] {
				return true
			}
		}
	}
	return false
}

// TestBisectionMonotoneAttainment searches a smooth attainment curve,
// a(s) = 1 / (1 + (s/3)⁴), for a ≥ 0.9: (s/3)⁴ ≤ 1/9, s ≤ 3·9^(−1/4) = √3.
func TestBisectionMonotoneAttainment(t *testing.T) {
	attain := func(s float64) float64 { return 1 / (1 + math.Pow(s/3, 4)) }
	br, err := Bisection{Tolerance: 0.01}.Search(func(s float64) (bool, error) { return attain(s) >= 0.9, nil })
	if err != nil {
		t.Fatal(err)
	}
	want := math.Sqrt(3)
	if !(br.Lo <= want && want < br.Hi && br.Hi/br.Lo < 1.01) {
		t.Fatalf("got [%g, %g), want a 1%% bracket around √3 = %g", br.Lo, br.Hi, want)
	}
	// From [1, 2): ⌈log₂(ln 2 / ln 1.01)⌉ = ⌈6.12⌉ = 7 bisections after 2 bracketing runs.
	if br.Runs != 9 {
		t.Errorf("runs = %d, want 9", br.Runs)
	}
}

func TestBisectionBounds(t *testing.T) {
	var seen []float64
	br, err := Bisection{MinScale: 0.25}.Search(threshold(0.1, &seen))
	if err != nil || br.Lo != 0 || br.Hi != 0.25 || !br.Converged || br.Runs != 3 {
		t.Errorf("never met: got %+v, %v; want Lo 0, Hi 0.25 after 1, 0.5, 0.25", br, err)
	}
	seen = nil
	br, err = Bisection{MaxScale: 6}.Search(threshold(100, &seen))
	if err != nil || br.Lo != 6 || !math.IsInf(br.Hi, 1) || !br.Converged || br.Runs != 4 {
		t.Errorf("always met: got %+v, %v; want Lo 6, Hi +Inf after 1, 2, 4, 6 (scales %v)", br, err, seen)
	}
}

func TestBisectionRunLimit(t *testing.T) {
	var seen []float64
	br, err := Bisection{MaxRuns: 4}.Search(threshold(3.3, &seen))
	if err != nil {
		t.Fatal(err)
	}
	// 1 ✓, 2 ✓, 4 ✗, √8 ≈ 2.83 ✓, then the budget is spent.
	if br.Converged || br.Runs != 4 || br.Lo != math.Sqrt(8) || br.Hi != 4 {
		t.Errorf("got %+v, want unconverged [√8, 4) after 4 runs", br)
	}
}

func TestBisectionErrors(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, err := Bisection{}.Search(func(s float64) (bool, error) {
		if calls++; calls == 3 {
			return false, boom
		}
		return true, nil
	})
	if !errors.Is(err, boom) || calls != 3 {
		t.Errorf("got %v after %d calls, want boom after 3", err, calls)
	}
	never := func(float64) (bool, error) { t.Error("evaluated with bad options"); return false, nil }
	for _, b := range []Bisection{{Tolerance: -1}, {Tolerance: 1}, {MaxRuns: -1}, {Start: 2, MaxScale: 1}, {MinScale: -1},
		{Tolerance: math.NaN()}, {MaxScale: math.Inf(1)}} {
		if _, err := b.Search(never); err == nil {
			t.Errorf("%+v: want an error", b)
		}
	}
}

func TestBisectionNarrow(t *testing.T) {
	var seen []float64
	br, err := Bisection{}.Narrow(Bracket{Lo: 2, Hi: 4, Runs: 5}, threshold(3.3, &seen))
	if err != nil {
		t.Fatal(err)
	}
	// From [2, 4): ⌈log₂(ln 2 / ln 1.02)⌉ = ⌈5.13⌉ = 6 runs, none at 2 or 4.
	if !br.Converged || !(br.Lo <= 3.3 && 3.3 < br.Hi) || br.Runs != 5+6 || len(seen) != 6 || seen[0] != math.Sqrt(8) {
		t.Errorf("got %+v after scales %v", br, seen)
	}
	for _, from := range []Bracket{{Lo: 0, Hi: 2}, {Lo: 2, Hi: 2}, {Lo: 1, Hi: math.Inf(1)}} {
		if _, err := (Bisection{}).Narrow(from, threshold(1, &seen)); err == nil {
			t.Errorf("narrow %+v: want an error", from)
		}
	}
}
