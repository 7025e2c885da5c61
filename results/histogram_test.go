package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBucketLayout(t *testing.T) {
	// Every value lies in its bucket's range, indices never decrease with
	// the value, and widths stay within 1/128 of the lower bound.
	vals := []int64{0, 1, 127, 128, 255, 256, 257, 511, 512, 1000, 1 << 20,
		1e9, 1e12, math.MaxInt64 - 1, math.MaxInt64}
	for s := range 62 {
		vals = append(vals, 1<<s-1, 1<<s, 1<<s+1)
	}
	slices.Sort(vals)
	prev := -1
	for _, v := range vals {
		checkBucket(t, v)
		i := bucketOf(v)
		if i < prev {
			t.Errorf("bucketOf(%d) = %d < previous %d", v, i, prev)
		}
		prev = i
	}
	if got := bucketOf(math.MaxInt64); got != numBuckets-1 {
		t.Errorf("bucketOf(MaxInt64) = %d, want last bucket %d", got, numBuckets-1)
	}
}

func checkBucket(t *testing.T, v int64) {
	t.Helper()
	i := bucketOf(v)
	if i < 0 || i >= numBuckets {
		t.Fatalf("bucketOf(%d) = %d outside [0, %d)", v, i, numBuckets)
	}
	lo, w := bucketRange(i)
	if v < lo || v-lo >= w {
		t.Fatalf("v=%d in bucket %d = [%d, %d+%d)", v, i, lo, lo, w)
	}
	if w > 1 && float64(w) > float64(lo)/subBuckets {
		t.Fatalf("bucket %d width %d > lower bound %d / %d", i, w, lo, subBuckets)
	}
}

func FuzzBucket(f *testing.F) {
	for _, v := range []int64{0, 255, 256, 1e9, math.MaxInt64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		if v < 0 {
			v = -(v + 1)
		}
		checkBucket(t, v)
	})
}

func TestHistogramQuantileError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() int64{
		"lognormal ms": func() int64 { return int64(math.Exp(r.NormFloat64()*1.5) * 1e7) },
		"small ints":   func() int64 { return r.Int64N(300) },
		"exp 1s":       func() int64 { return int64(r.ExpFloat64() * 1e9) },
		"two points":   func() int64 { return []int64{1e6, 5e8}[r.IntN(2)] },
		"huge":         func() int64 { return math.MaxInt64 - r.Int64N(1e15) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 7, 1000, 20000} {
			var h Histogram
			xs := make([]float64, n)
			for i := range xs {
				v := gen()
				h.Add(v)
				xs[i] = float64(v)
			}
			slices.Sort(xs)
			for _, q := range []float64{0, 0.001, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
				want, got := Quantile(xs, q), h.Quantile(q)
				if math.Abs(got-want) > HistogramRelErr*want+1e-9*want {
					t.Errorf("%s n=%d q=%g: got %g, exact %g (rel err %.4g > %.4g)",
						name, n, q, got, want, math.Abs(got-want)/want, HistogramRelErr)
				}
			}
		}
	}
}

func TestHistogramExactParts(t *testing.T) {
	var h Histogram // zero value is usable
	if h.Count() != 0 || h.Mean() != 0 || h.Quantile(0.5) != 0 || h.Max() != 0 {
		t.Fatalf("empty histogram not all zero: %+v", h)
	}
	h.Add(10)
	h.AddN(1000, 3)
	h.AddN(5, 0) // no-op
	// Σ = 10 + 3000 = 3010 over 4 samples.
	if h.Count() != 4 || h.Mean() != 752.5 || h.Min() != 10 || h.Max() != 1000 {
		t.Errorf("count %d mean %g min %d max %d, want 4 752.5 10 1000",
			h.Count(), h.Mean(), h.Min(), h.Max())
	}
	// Ranks 0..3 = 10, 1000, 1000, 1000; q=0.5 → h=1.5 → 1000 (clamped to max).
	if got := h.Quantile(0.5); got != 1000 {
		t.Errorf("p50 = %g, want 1000", got)
	}
	// q=1/6 → h=0.5 → 10 + 0.5·(1000−10) = 505.
	if got := h.Quantile(1.0 / 6); math.Abs(got-505) > 1e-9 {
		t.Errorf("q=1/6 = %g, want 505", got)
	}
}

func TestHistogramMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var a, b, all Histogram
	for i := range 5000 {
		v := r.Int64N(1e10)
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	var m Histogram
	m.Merge(nil)
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&Histogram{})
	if m.Count() != all.Count() || m.Mean() != all.Mean() || m.Min() != all.Min() || m.Max() != all.Max() {
		t.Fatalf("merged %d/%g/%d/%d, want %d/%g/%d/%d", m.Count(), m.Mean(), m.Min(), m.Max(),
			all.Count(), all.Mean(), all.Min(), all.Max())
	}
	for _, q := range []float64{0, 0.3, 0.5, 0.99, 1} {
		if m.Quantile(q) != all.Quantile(q) {
			t.Errorf("q=%g: merged %g, direct %g", q, m.Quantile(q), all.Quantile(q))
		}
	}
}

func TestHistogramPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"negative sample": func() { new(Histogram).Add(-1) },
		"negative count":  func() { new(Histogram).AddN(1, -1) },
		"q > 1":           func() { new(Histogram).Quantile(1.5) },
		"q NaN":           func() { new(Histogram).Quantile(math.NaN()) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func BenchmarkHistogramAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := make([]int64, 4096)
	for i := range vals {
		vals[i] = int64(r.ExpFloat64() * 3e7)
	}
	var h Histogram
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		h.Add(vals[i&4095])
	}
}
