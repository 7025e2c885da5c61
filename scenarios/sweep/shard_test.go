package sweep

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{" 2 / 5 ", Shard{2, 5}, ""},
		{"3/2", Shard{}, "the index must be 0 to 1"},
		{"2/2", Shard{}, "the index must be 0 to 1"},
		{"-1/2", Shard{}, "the index must be 0 to 1"},
		{"0/0", Shard{}, "shard count must be 1 to"},
		{"0/100001", Shard{}, "shard count must be 1 to"},
		{"1", Shard{}, "want i/n"},
		{"a/b", Shard{}, "want i/n"},
		{"1/2/3", Shard{}, "want i/n"},
		{"", Shard{}, "want i/n"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseShard(%q): error %v, want %q", tt.in, err, tt.err)
		}
	}
}

// TestShardsPartition checks that the n shards of a point list are
// disjoint, complete, in order, and balanced to within one point.
func TestShardsPartition(t *testing.T) {
	s := Spec{Grid: Axes{axis("a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23")}}
	points, err := Expand(&s, 1)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 30; n++ {
		owner := make([]int, len(points))
		for i := range owner {
			owner[i] = -1
		}
		for i := range n {
			sel := Shard{i, n}.Select(points)
			if want := len(points)/n + btoi(i < len(points)%n); len(sel) != want {
				t.Errorf("shard %d/%d holds %d points, want %d", i, n, len(sel), want)
			}
			for j, p := range sel {
				if owner[p.Index] >= 0 {
					t.Errorf("n=%d: point %d in shards %d and %d", n, p.Index, owner[p.Index], i)
				}
				owner[p.Index] = i
				if j > 0 && sel[j-1].Index >= p.Index {
					t.Errorf("shard %d/%d out of order", i, n)
				}
			}
		}
		for k, o := range owner {
			if o < 0 {
				t.Errorf("n=%d: point %d in no shard", n, k)
			}
		}
	}
	if got := (Shard{}).Select(points); len(got) != len(points) {
		t.Errorf("the zero shard holds %d of %d points", len(got), len(points))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/2", "1/4", "x", "-0/-0", "99999/100000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err == nil && (sh.Index < 0 || sh.Index >= sh.Count || sh.Count > MaxShards) {
			t.Fatalf("ParseShard(%q) = %v, accepted", s, sh)
		}
	})
}
