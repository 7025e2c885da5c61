package plot

import (
	"cmp"
	"slices"
	"strings"

	"handoff/results"
)

// Choice picks the sweep points whose attribution bars DrawDirChoosing
// draws: those whose id starts with one of Select (none: every point),
// then of them the Top with the longest mean end-to-end time, slowest
// first (0: all, in results.csv's order).
type Choice struct {
	Top    int
	Select []string
}

// choose keeps the bars c picks, in its order.
func (c Choice) choose(ids, labels []string, attrs []results.Attribution) ([]string, []results.Attribution) {
	var keep []int
	for i, id := range ids {
		if len(c.Select) == 0 || slices.ContainsFunc(c.Select, func(p string) bool { return strings.HasPrefix(id, p) }) {
			keep = append(keep, i)
		}
	}
	if c.Top > 0 {
		total := func(i int) float64 { return sumOf(attrs[i].TTFTS) + sumOf(attrs[i].DecodeS) }
		slices.SortStableFunc(keep, func(a, b int) int { return cmp.Compare(total(b), total(a)) })
		keep = keep[:min(len(keep), c.Top)]
	}
	outL, outA := make([]string, len(keep)), make([]results.Attribution, len(keep))
	for k, i := range keep {
		outL[k], outA[k] = labels[i], attrs[i]
	}
	return outL, outA
}

// sumOf adds a map's values in key order (a fixed order, for the rounding).
func sumOf(m map[string]float64) float64 {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := 0.0
	for _, k := range keys {
		s += m[k]
	}
	return s
}
