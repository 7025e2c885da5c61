package results

import (
	"math"
	"math/bits"
	"slices"
)

// Stats summarises one latency distribution, in seconds rounded to the ns.
type Stats struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Quantile returns the q-quantile of sorted (ascending) by linear
// interpolation between the closest ranks: with h = q·(n−1), the value is
// x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]) (Hyndman–Fan type 7, the default of
// NumPy and R). Returns 0 for empty input. O(1). Panics unless 0 ≤ q ≤ 1.
func Quantile(sorted []float64, q float64) float64 {
	if !(q >= 0 && q <= 1) {
		panic("results: quantile outside [0, 1]")
	}
	n := len(sorted)
	if n == 0 {
		return 0
	}
	h := q * float64(n-1)
	i := int(math.Floor(h))
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// statsNs returns the statistics of xsNs (the caller's scratch, in ns,
// rearranged) converted to seconds. Empty input gives zeros. The mean is
// summed in input order and the quantiles equal Quantile on the sorted data,
// so results are deterministic. Expected O(n): order statistics by
// selection, not a full sort.
func statsNs(xsNs []float64) Stats {
	if len(xsNs) == 0 {
		return Stats{}
	}
	var sum float64
	for _, x := range xsNs {
		sum += x
	}
	mean := sum / float64(len(xsNs))
	r := ranker{xs: xsNs}
	return Stats{
		Mean: nsToS(mean),
		P50:  nsToS(r.quantile(0.50)),
		P90:  nsToS(r.quantile(0.90)),
		P99:  nsToS(r.quantile(0.99)),
		Max:  nsToS(r.at(len(xsNs) - 1)),
	}
}

// ranker finds order statistics of xs by successive selections. Queries
// must come in non-decreasing rank order: each selection settles rank k and
// leaves only values ≥ xs[k] after it, so the next one searches xs[k+1:].
type ranker struct {
	xs   []float64
	next int // ranks below next are no longer searchable; next−1 is settled
}

// at returns the value of rank k (0-based) of xs. k must be ≥ the previous
// query's rank.
func (r *ranker) at(k int) float64 {
	if k >= r.next {
		selectK(r.xs[r.next:], k-r.next)
		r.next = k + 1
	}
	return r.xs[k]
}

// quantile is Quantile on the sorted xs, without sorting.
func (r *ranker) quantile(q float64) float64 {
	n := len(r.xs)
	h := q * float64(n-1)
	i := int(math.Floor(h))
	lo := r.at(i)
	if i >= n-1 || h == float64(i) {
		return lo
	}
	return lo + (h-float64(i))*(r.at(i+1)-lo)
}

// selectK rearranges xs so that xs[k] holds the value of rank k, with no
// larger value before it and no smaller one after. Quickselect with a
// median-of-three pivot and Hoare partition (robust to duplicates);
// expected O(n), and after 2·log2(n) rounds it sorts what is left, so the
// worst case is O(n log n). Deterministic.
func selectK(xs []float64, k int) {
	lo, hi := 0, len(xs)-1
	budget := 2*bits.Len(uint(len(xs))) + 4
	for hi-lo > 16 {
		if budget--; budget < 0 {
			slices.Sort(xs[lo : hi+1])
			return
		}
		j := partition(xs, lo, hi)
		if k <= j {
			hi = j
		} else {
			lo = j + 1
		}
	}
	slices.Sort(xs[lo : hi+1])
}

// partition splits xs[lo..hi] (hi−lo ≥ 2) around the median of its first,
// middle and last values and returns j, lo ≤ j < hi, with xs[lo..j] ≤ pivot
// ≤ xs[j+1..hi].
func partition(xs []float64, lo, hi int) int {
	mid := lo + (hi-lo)/2
	if xs[mid] < xs[lo] {
		xs[mid], xs[lo] = xs[lo], xs[mid]
	}
	if xs[hi] < xs[mid] {
		xs[hi], xs[mid] = xs[mid], xs[hi]
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
	}
	p := xs[mid]
	i, j := lo-1, hi+1
	for {
		for i++; xs[i] < p; i++ {
		}
		for j--; xs[j] > p; j-- {
		}
		if i >= j {
			return j
		}
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// histStats returns the statistics of h in seconds; nil or empty gives zeros.
func histStats(h *Histogram) Stats {
	if h == nil || h.Count() == 0 {
		return Stats{}
	}
	return Stats{
		Mean: nsToS(h.Mean()),
		P50:  nsToS(h.Quantile(0.50)),
		P90:  nsToS(h.Quantile(0.90)),
		P99:  nsToS(h.Quantile(0.99)),
		Max:  nsToS(float64(h.Max())),
	}
}

// nsToS converts ns to seconds, rounded to the whole ns: sub-ns digits are
// noise and would clutter the JSON (0.24000000000000005).
func nsToS(ns float64) float64 { return math.Round(ns) / 1e9 }

// finite returns x, or 0 when x is NaN or ±Inf (encoding/json rejects them).
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
