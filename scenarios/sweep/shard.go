package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds the shard count.
const MaxShards = 100_000

// Shard is one of Count deterministic slices of a sweep. Index is 0-based
// (0 ≤ Index < Count), as Kubernetes' JOB_COMPLETION_INDEX is: shard i of n
// holds the points whose index is i modulo n, so every shard gets a share of
// every part of the grid. The zero Shard holds every point.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/n" with 0 ≤ i < n ≤ MaxShards.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || ierr != nil || nerr != nil {
		return Shard{}, fmt.Errorf("--shard %q: want i/n, e.g. 0/4 (i counts from 0)", s)
	}
	if n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("--shard %s: the shard count must be 1 to %d", s, MaxShards)
	}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %s: the index must be 0 to %d (i counts from 0)", s, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// String returns "i/n", or "all" for the zero Shard.
func (sh Shard) String() string {
	if sh.Count == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", sh.Index, sh.Count)
}

// Holds reports whether the point with the given index is in the shard.
func (sh Shard) Holds(index int) bool {
	return sh.Count <= 1 || index%sh.Count == sh.Index
}

// Select returns the shard's points, in order. The shards 0/n … n−1/n of
// a point list are disjoint and together hold every point. Cost: O(points).
func (sh Shard) Select(points []Point) []Point {
	out := make([]Point, 0, len(points)/max(sh.Count, 1)+1)
	for _, p := range points {
		if sh.Holds(p.Index) {
			out = append(out, p)
		}
	}
	return out
}
