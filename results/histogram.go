package results

import (
	"math"
	"math/bits"
)

// Bucket layout (log-linear, HDR-style). Values 0..255 ns each have their own
// bucket. Above that, every power-of-two octave [2^k, 2^(k+1)) is split into
// subBuckets equal-width buckets, so a bucket's width is at most 1/128 of its
// lower bound. A value v lands in bucket e·128 + v>>e with
// e = max(0, bitlen(v) − 8). The layout covers every non-negative int64.
const (
	subBits    = 7
	subBuckets = 1 << subBits // buckets per octave
	// numBuckets covers v up to math.MaxInt64: bitlen 63 → e = 55,
	// index 55·128 + 255.
	numBuckets = (63-8)<<subBits + 2*subBuckets
)

// HistogramRelErr is the largest relative error of Histogram.Quantile against
// the exact quantile (same interpolation method) of the samples added:
// half a bucket width over the bucket's lower bound, 1/256 ≈ 0.39%.
const HistogramRelErr = 1.0 / (2 * subBuckets)

// Histogram is a fixed-memory distribution of non-negative int64 latencies in
// nanoseconds (log-linear buckets over the whole int64 range, quantile
// relative error ≤ HistogramRelErr). The zero value is an empty histogram,
// ready to use; the bucket array (about 57 KB) is allocated by the first Add.
// Count, sum, minimum and maximum are kept exactly. Not safe for concurrent
// use.
type Histogram struct {
	counts []int64 // len numBuckets once allocated
	n      int64
	sumNs  int64 // overflows past ~292 years of total latency
	minNs  int64
	maxNs  int64
}

// bucketOf returns the bucket index of v ≥ 0. O(1), no branches on v's size.
func bucketOf(v int64) int {
	e := bits.Len64(uint64(v)|(2*subBuckets-1)) - (subBits + 1)
	return e<<subBits + int(v>>uint(e))
}

// bucketRange returns the smallest value of bucket i and its width in ns.
func bucketRange(i int) (loNs, widthNs int64) {
	if i < 2*subBuckets {
		return int64(i), 1
	}
	e := i>>subBits - 1
	m := int64(i - e<<subBits)
	return m << uint(e), 1 << uint(e)
}

// Add records one sample of ns nanoseconds. O(1); allocates only on the first
// call. Panics if ns < 0.
func (h *Histogram) Add(ns int64) { h.AddN(ns, 1) }

// AddN records n samples of ns nanoseconds each. O(1). Panics if ns < 0 or
// n < 0; n == 0 is a no-op.
func (h *Histogram) AddN(ns, n int64) {
	if ns < 0 || n < 0 {
		panic("results: negative histogram sample or count")
	}
	if n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	h.counts[bucketOf(ns)] += n
	if h.n == 0 || ns < h.minNs {
		h.minNs = ns
	}
	if ns > h.maxNs {
		h.maxNs = ns
	}
	h.n += n
	h.sumNs += ns * n
}

// Count returns the number of samples added.
func (h *Histogram) Count() int64 { return h.n }

// Mean returns the exact mean of the samples in ns (from a running integer
// sum), or 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return float64(h.sumNs) / float64(h.n)
}

// Std is the samples' population standard deviation in ns, each taken at
// its bucket's midpoint (the mean is exact): within a bucket's width of the
// exact figure. 0 when empty.
func (h *Histogram) Std() float64 {
	if h.n == 0 {
		return 0
	}
	mean, sum := h.Mean(), 0.0
	for i, c := range h.counts {
		if c > 0 {
			lo, width := bucketRange(i)
			d := float64(lo) + float64(width-1)/2 - mean
			sum += float64(c) * d * d
		}
	}
	return math.Sqrt(sum / float64(h.n))
}

// Min returns the smallest sample in ns (exact), or 0 when empty.
func (h *Histogram) Min() int64 { return h.minNs }

// Max returns the largest sample in ns (exact), or 0 when empty.
func (h *Histogram) Max() int64 { return h.maxNs }

// Quantile returns the q-quantile in ns by the same method as Quantile on
// sorted data (linear interpolation between the closest ranks, rank
// q·(n−1)), with each rank's value approximated by the middle of its bucket
// clamped to [Min, Max]; ranks 0 and n−1 are exact. Relative error ≤
// HistogramRelErr. Returns 0 when empty. Cost O(numBuckets). Panics unless
// 0 ≤ q ≤ 1.
func (h *Histogram) Quantile(q float64) float64 {
	if !(q >= 0 && q <= 1) {
		panic("results: quantile outside [0, 1]")
	}
	if h.n == 0 {
		return 0
	}
	pos := q * float64(h.n-1)
	r := int64(math.Floor(pos))
	frac := pos - float64(r)
	lo := h.valueAtRank(r)
	if frac == 0 || r+1 >= h.n {
		return lo
	}
	return lo + frac*(h.valueAtRank(r+1)-lo)
}

// valueAtRank approximates the value of the sample at 0-based rank r of the
// sorted samples. O(numBuckets).
func (h *Histogram) valueAtRank(r int64) float64 {
	if r <= 0 {
		return float64(h.minNs)
	}
	if r >= h.n-1 {
		return float64(h.maxNs)
	}
	var cum int64
	for i, c := range h.counts {
		cum += c
		if cum > r {
			loNs, w := bucketRange(i)
			v := float64(loNs) + float64(w-1)/2
			return math.Min(math.Max(v, float64(h.minNs)), float64(h.maxNs))
		}
	}
	return float64(h.maxNs) // unreachable: counts sum to n
}

// Merge adds every sample of o to h. O(numBuckets); o is unchanged and may be
// nil or empty.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.minNs < h.minNs {
		h.minNs = o.minNs
	}
	h.maxNs = max(h.maxNs, o.maxNs)
	h.n += o.n
	h.sumNs += o.sumNs
}
