package router

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTTLIndexExpires(t *testing.T) {
	x := NewTTLIndex(100)
	x.Record(0, []uint64{1, 2, 3}, 0)
	x.Record(1, []uint64{1}, 0)
	tests := []struct {
		inst   int
		hashes []uint64
		nowNs  int64
		want   int
	}{
		{0, []uint64{1, 2, 3}, 99, 3},
		{0, []uint64{1, 9, 3}, 99, 1}, // leading blocks only
		{1, []uint64{1, 2}, 99, 1},
		{2, []uint64{1}, 99, 0},
		{0, []uint64{1, 2, 3}, 100, 0}, // written at 0, ttl 100
	}
	for _, tc := range tests {
		if got := x.Overlap(tc.inst, tc.hashes, tc.nowNs); got != tc.want {
			t.Errorf("Overlap(%d, %v, %d) = %d, want %d", tc.inst, tc.hashes, tc.nowNs, got, tc.want)
		}
	}
	if x.Len() != 0 {
		t.Errorf("Len = %d after everything expired", x.Len())
	}
}

func TestTTLIndexRewriteExtendsLife(t *testing.T) {
	x := NewTTLIndex(100)
	x.Record(0, []uint64{1, 2}, 0)
	x.Record(0, []uint64{1}, 50)
	if got := x.Overlap(0, []uint64{1, 2}, 120); got != 1 {
		t.Fatalf("overlap %d, want 1: block 1 rewritten at 50 lives to 150, block 2 died at 100", got)
	}
	if got := x.Overlap(0, []uint64{1}, 150); got != 0 {
		t.Fatalf("overlap %d at 150, want 0", got)
	}
}

func TestTTLIndexBoundedByLiveEntries(t *testing.T) {
	x := NewTTLIndex(10)
	for now := range int64(100000) {
		x.Record(int(now%4), []uint64{uint64(now)}, now)
	}
	if x.Len() > 10 || len(x.fifo)-x.head > 10 || cap(x.fifo) > 4096 {
		t.Fatalf("live %d, queued %d, capacity %d: expired entries kept", x.Len(), len(x.fifo)-x.head, cap(x.fifo))
	}
}

func TestLRUIndexEvictsLeastRecent(t *testing.T) {
	x := NewLRUIndex()
	x.Record(0, []uint64{1, 2}, 3) // touched 2 then 1: order 1, 2
	x.Record(0, []uint64{3, 4}, 3) // 4, 1, 2 then 3 evicts 2: order 3, 4, 1
	check := func(hashes []uint64, want int) {
		t.Helper()
		if got := x.Matched(0, hashes); got != want {
			t.Fatalf("Matched(%v) = %d, want %d", hashes, got, want)
		}
	}
	check([]uint64{1, 2}, 1)
	check([]uint64{3, 4}, 2)
	x.Record(0, []uint64{1}, 3) // 1, 3, 4
	x.Record(0, []uint64{5}, 9) // the capacity was fixed at 3: evicts 4: 5, 1, 3
	check([]uint64{3, 4}, 1)
	check([]uint64{5}, 1)
	if x.Len(0) != 3 || x.Len(1) != 0 || x.Matched(7, []uint64{1}) != 0 {
		t.Fatalf("Len(0) = %d, Len(1) = %d", x.Len(0), x.Len(1))
	}
}

func TestLRUIndexKeepsLeadingBlocksOfLongPrompt(t *testing.T) {
	x := NewLRUIndex()
	x.Record(5, []uint64{1, 2, 3, 4}, 2)
	if got := x.Matched(5, []uint64{1, 2, 3}); got != 2 {
		t.Fatalf("matched %d, want the 2 leading blocks", got)
	}
}

// TestIndexHoldersMatchLookups records random prompts on random instances
// in both prefix indexes and checks after each record that the holders of
// every prompt family's first block are exactly the instances a look-up
// finds it on.
func TestIndexHoldersMatchLookups(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 5))
		ttl, lru := NewTTLIndex(1+rng.Int64N(5000)), NewLRUIndex()
		capacity := 1 + rng.IntN(12)
		nowNs := int64(0)
		for step := range 300 {
			nowNs += rng.Int64N(300)
			inst, fam := rng.IntN(6), uint64(rng.IntN(5))
			var hashes []uint64
			for b := range rng.IntN(6) {
				hashes = append(hashes, fam<<32|uint64(b+1))
			}
			ttl.Record(inst, hashes, nowNs)
			lru.Record(inst, hashes, capacity)
			for f := range uint64(5) {
				first := []uint64{f<<32 | 1}
				gotTTL := slices.Sorted(slices.Values(ttl.Holders(nil, first, nowNs)))
				gotLRU := slices.Sorted(slices.Values(lru.Holders(nil, first)))
				var wantTTL, wantLRU []int
				for i := range 6 {
					if ttl.Overlap(i, first, nowNs) > 0 {
						wantTTL = append(wantTTL, i)
					}
					if lru.Matched(i, first) > 0 {
						wantLRU = append(wantLRU, i)
					}
				}
				if !slices.Equal(gotTTL, wantTTL) || !slices.Equal(gotLRU, wantLRU) {
					t.Fatalf("seed %d step %d family %d: TTL holders %v, want %v; LRU holders %v, want %v",
						seed, step, f, gotTTL, wantTTL, gotLRU, wantLRU)
				}
			}
		}
	}
}
