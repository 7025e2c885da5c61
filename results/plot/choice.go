package plot

import (
	"cmp"
	"fmt"
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

// chooses reports whether c picks some bars rather than all.
func (c Choice) chooses() bool { return c.Top > 0 || len(c.Select) > 0 }

// check returns an error naming the first of c.Select that starts no id
// of ids (the points of sweep dir that can be drawn), and the ids there
// are.
func (c Choice) check(dir string, ids []string) error {
	for _, p := range c.Select {
		if !slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, p) }) {
			return fmt.Errorf("--select %s: no point of %s has an id that starts with it; %s", p, dir, describeIDs(ids))
		}
	}
	return nil
}

// describeIDs names the ids of a sweep's points: all of them when they
// are few, else the first and the last.
func describeIDs(ids []string) string {
	switch {
	case len(ids) == 0:
		return "it has no point with a summary.json yet"
	case len(ids) == 1:
		return "its one point is " + ids[0]
	case len(ids) <= 8:
		return fmt.Sprintf("its %d points are %s", len(ids), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("its %d points are %s to %s", len(ids), ids[0], ids[len(ids)-1])
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
