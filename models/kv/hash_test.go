package kv

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// firstDiff returns the index of the first differing hash of a and b, or
// min(len) if one is a prefix of the other.
func firstDiff(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestAppendBlockHashesIdentity(t *testing.T) {
	const x, y, z = 11, 12, 13
	seg := func(id uint64, n int) Segment { return Segment{ID: id, Tokens: n} }
	tests := []struct {
		name   string
		a, b   []Segment
		ua, ub uint64
		n      int // tokens hashed, block size 4
		diff   int // first differing block; n/4 if all equal
	}{
		// Tokens 8..11 are X8 X9 Y0 Y1 against X8 X9 Z0 Z1: block 2 differs.
		{"diverge mid block", []Segment{seg(x, 10), seg(y, 20)}, []Segment{seg(x, 10), seg(z, 20)}, 1, 2, 30, 2},
		{"same segments, own tokens differ", []Segment{seg(x, 10)}, []Segment{seg(x, 10)}, 1, 2, 16, 2},
		{"same segments, shorter than them", []Segment{seg(x, 10), seg(y, 8)}, []Segment{seg(x, 10), seg(y, 8)}, 1, 2, 18, 4},
		{"same sequence", []Segment{seg(x, 6), seg(y, 6)}, []Segment{seg(x, 6), seg(y, 6)}, 1, 1, 20, 5},
		// Block 1 is X4 X5 Y0 Y1 against X4 X5 X6 X7.
		{"unaligned boundary vs one segment", []Segment{seg(x, 6), seg(y, 6)}, []Segment{seg(x, 12)}, 1, 1, 12, 1},
		// Block 2 is X8 X9 X0 X1 against X8 X9 X10 X11: repeating an ID restarts offsets.
		{"repeated ID restarts offsets", []Segment{seg(x, 10), seg(x, 6)}, []Segment{seg(x, 16)}, 1, 1, 16, 2},
		{"zero-length segment ignored", []Segment{seg(x, 4), seg(z, 0), seg(y, 4)}, []Segment{seg(x, 4), seg(y, 4)}, 1, 1, 12, 3},
		// Token p is (own 5, p) against (segment 5, p): the namespaces differ.
		{"own tokens vs segment with same ID", nil, []Segment{seg(5, 8)}, 5, 9, 8, 0},
		{"segment boundary at block boundary", []Segment{seg(x, 4), seg(y, 4)}, []Segment{seg(x, 4), seg(z, 4)}, 1, 1, 8, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AppendBlockHashes(nil, tt.a, tt.ua, tt.n, 4)
			b := AppendBlockHashes(nil, tt.b, tt.ub, tt.n, 4)
			if len(a) != tt.n/4 || len(b) != tt.n/4 {
				t.Fatalf("got %d and %d hashes, want %d", len(a), len(b), tt.n/4)
			}
			if d := firstDiff(a, b); d != tt.diff {
				t.Fatalf("first differing block %d, want %d", d, tt.diff)
			}
			for i := tt.diff; i < len(a); i++ {
				if a[i] == b[i] {
					t.Errorf("block %d equal after divergence", i)
				}
			}
		})
	}
}

func TestAppendBlockHashesPartialBlock(t *testing.T) {
	segs := []Segment{{ID: 1, Tokens: 7}}
	for n, want := range []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2} {
		if got := len(AppendBlockHashes(nil, segs, 9, n, 4)); got != want {
			t.Errorf("n=%d: %d hashes, want %d", n, got, want)
		}
	}
}

// randomSegs draws up to 5 segments of 0..20 tokens with IDs from a small set,
// so repeats and shared prefixes are common.
func randomSegs(r *rand.Rand) []Segment {
	segs := make([]Segment, r.IntN(6))
	for i := range segs {
		segs[i] = Segment{ID: uint64(r.IntN(3)), Tokens: r.IntN(21)}
	}
	return segs
}

func TestAppendBlockHashesIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		segs, bs, n := randomSegs(r), 1+r.IntN(8), r.IntN(120)
		want := AppendBlockHashes(nil, segs, 77, n, bs)
		var got []uint64
		for m := 0; m < n; m += r.IntN(2 * bs) {
			got = AppendBlockHashes(got, segs, 77, m, bs)
		}
		got = AppendBlockHashes(got, segs, 77, n, bs)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (segs %v, bs %d, n %d): incremental %x, one-shot %x", trial, segs, bs, n, got, want)
		}
		if slices.Contains(want, 0) {
			t.Fatalf("trial %d: hash 0 produced", trial)
		}
	}
}

// tokenIDs spells out the identity of each of the first n tokens.
func tokenIDs(segs []Segment, uid uint64, n int) [][3]uint64 {
	var ids [][3]uint64
	for _, s := range segs {
		for k := range s.Tokens {
			ids = append(ids, [3]uint64{0, s.ID, uint64(k)})
		}
	}
	for p := len(ids); p < n; p++ {
		ids = append(ids, [3]uint64{1, uid, uint64(p)})
	}
	return ids[:n]
}

// TestAppendBlockHashesAgainstTokens checks "equal hash i iff equal first
// (i+1)·blockSize token identities" against a per-token reference.
func TestAppendBlockHashesAgainstTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		bs, n := 1+r.IntN(6), r.IntN(60)
		sa, sb := randomSegs(r), randomSegs(r)
		ua, ub := uint64(r.IntN(2)), uint64(r.IntN(2))
		ha, hb := AppendBlockHashes(nil, sa, ua, n, bs), AppendBlockHashes(nil, sb, ub, n, bs)
		ta, tb := tokenIDs(sa, ua, n), tokenIDs(sb, ub, n)
		for i := range ha {
			same := slices.Equal(ta[:(i+1)*bs], tb[:(i+1)*bs])
			if (ha[i] == hb[i]) != same {
				t.Fatalf("trial %d block %d: equal hashes %v, equal tokens %v (%v/%d vs %v/%d, bs %d)",
					trial, i, ha[i] == hb[i], same, sa, ua, sb, ub, bs)
			}
		}
	}
}

func TestAppendBlockHashesNoAlloc(t *testing.T) {
	segs := []Segment{{ID: 1, Tokens: 100}, {ID: 2, Tokens: 37}}
	dst := make([]uint64, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		dst = AppendBlockHashes(dst[:0], segs, 3, 500, 16)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}

func TestAppendBlockHashesPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"block size 0":     func() { AppendBlockHashes(nil, nil, 1, 8, 0) },
		"negative n":       func() { AppendBlockHashes(nil, nil, 1, -1, 4) },
		"negative segment": func() { AppendBlockHashes(nil, []Segment{{1, -3}}, 1, 8, 4) },
	} {
		t.Run(name, func(t *testing.T) { mustPanic(t, f) })
	}
}

func mustPanic(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	f()
}

func FuzzAppendBlockHashesIncremental(f *testing.F) {
	f.Add(uint8(4), uint8(10), uint8(20), uint8(0), uint8(3), uint8(17))
	f.Add(uint8(1), uint8(0), uint8(5), uint8(5), uint8(0), uint8(9))
	f.Fuzz(func(t *testing.T, bs, l0, l1, l2, split, n uint8) {
		if bs == 0 {
			return
		}
		segs := []Segment{{1, int(l0)}, {2, int(l1)}, {1, int(l2)}}
		want := AppendBlockHashes(nil, segs, 9, int(n), int(bs))
		got := AppendBlockHashes(AppendBlockHashes(nil, segs, 9, int(split), int(bs)), segs, 9, int(n), int(bs))
		if int(split) <= int(n) && !slices.Equal(got, want) {
			t.Fatalf("split %d: %x, want %x", split, got, want)
		}
	})
}

// TestGroupKey: group 0 keeps a block's hash; other groups' keys differ
// from it and from each other, and none is 0.
func TestGroupKey(t *testing.T) {
	hs := AppendBlockHashes(nil, []Segment{{ID: 7, Tokens: 64}}, 0, 64, 4)
	seen := map[uint64]bool{}
	for _, h := range hs {
		if GroupKey(h, 0) != h {
			t.Fatalf("group 0 changed hash %#x", h)
		}
		for g := range 4 {
			k := GroupKey(h, g)
			if k == 0 || seen[k] {
				t.Fatalf("group %d of %#x: key %#x is 0 or seen before", g, h, k)
			}
			seen[k] = true
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a negative group did not panic")
		}
	}()
	GroupKey(hs[0], -1)
}
