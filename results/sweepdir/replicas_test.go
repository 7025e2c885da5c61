package sweepdir

import (
	"math"
	"testing"
)

// TestMeanInterval: Student's t interval by hand (t(0.975, 2) = 4.302653).
func TestMeanInterval(t *testing.T) {
	mean, lo, hi := meanInterval([]float64{1, 2, 3})
	half := 4.302653 / math.Sqrt(3)
	if mean != 2 || math.Abs(lo-(2-half)) > 1e-5 || math.Abs(hi-(2+half)) > 1e-5 {
		t.Errorf("mean %g, interval [%g, %g]; want 2, [%g, %g]", mean, lo, hi, 2-half, 2+half)
	}
	if mean, lo, hi := meanInterval([]float64{5}); mean != 5 || lo != 5 || hi != 5 {
		t.Errorf("one replica: %g [%g, %g]", mean, lo, hi)
	}
}
