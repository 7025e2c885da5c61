package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"handoff/results/sweepdir"
)

// SeedPath is the scenario path that replicas vary.
const SeedPath = sweepdir.SeedPath

// Override is one varied field of a point: a dotted scenario path and a
// YAML value, applied as --set path=value.
type Override = sweepdir.Override

// Point is one scenario of a sweep: the base scenario with Overrides
// applied. The type is the sweep directory's (results/sweepdir), which
// records points; the alias keeps it sweep.Point where sweeps are planned.
type Point = sweepdir.Point

// Columns returns the varied paths in the order of every point's
// overrides: the grid paths, the zip paths, then "seed" with replicas > 1.
func (s *Spec) Columns() []string {
	cols := make([]string, 0, len(s.Grid)+len(s.Zip)+1)
	for _, ax := range s.Grid {
		cols = append(cols, ax.Path)
	}
	for _, ax := range s.Zip {
		cols = append(cols, ax.Path)
	}
	if s.Replicas > 1 {
		cols = append(cols, SeedPath)
	}
	return cols
}

// Expand validates the spec and returns its points in order: the first grid
// axis varies slowest, then the other grid axes, then the zip (its lists
// advance together), then the replicas, whose seeds are seed, seed+1, ….
// seed is the base scenario's seed. The same spec and seed always give the
// same points with the same IDs. Cost: O(points × columns).
func Expand(s *Spec, seed uint64) ([]Point, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	dims := s.dims()
	total, _ := s.count()
	points := make([]Point, total)
	digits := len(strconv.Itoa(total - 1))
	idx := make([]int, len(dims)) // mixed-radix counter, last digit fastest
	for k := range points {
		ov := s.overrides(idx, seed)
		points[k] = Point{Index: k, ID: pointID(k, digits, ov), Overrides: ov}
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return points, nil
}

// overrides returns the point at counter idx (one digit per dimension).
func (s *Spec) overrides(idx []int, seed uint64) []Override {
	ov := make([]Override, 0, len(s.Grid)+len(s.Zip)+1)
	for d, ax := range s.Grid {
		ov = append(ov, Override{Path: ax.Path, Value: ax.Values[idx[d]]})
	}
	d := len(s.Grid)
	if len(s.Zip) > 0 {
		for _, ax := range s.Zip {
			ov = append(ov, Override{Path: ax.Path, Value: ax.Values[idx[d]]})
		}
		d++
	}
	if s.Replicas > 1 {
		ov = append(ov, Override{Path: SeedPath, Value: strconv.FormatUint(seed+uint64(idx[d]), 10)})
	}
	return ov
}

// minIDDigits is the least width of the index part of a point ID, so that
// IDs of small sweeps line up and sort.
const minIDDigits = 4

// pointID is the zero-padded index and the first 8 hex digits of the
// SHA-256 of the overrides (quoted path=value lines): readable, sortable, and a
// different sweep's point at the same index gets a different ID.
func pointID(index, digits int, ov []Override) string {
	h := sha256.New()
	for _, o := range ov {
		fmt.Fprintf(h, "%q=%q\n", o.Path, o.Value)
	}
	return fmt.Sprintf("%0*d-%s", max(digits, minIDDigits), index, hex.EncodeToString(h.Sum(nil))[:8])
}
