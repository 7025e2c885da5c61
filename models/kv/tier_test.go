package kv

import (
	"math/rand/v2"
	"testing"
)

// TestTierLRU: a full tier evicts its least recently used block, and a
// touch or a repeated put makes a block the most recent.
func TestTierLRU(t *testing.T) {
	tr := NewTier("host", 3)
	for _, h := range []uint64{1, 2, 3} {
		if _, ev := tr.Put(h, 0); ev {
			t.Fatalf("put %d evicted into a tier with room", h)
		}
	}
	tr.Touch([]uint64{1}) // order now 2, 3, 1
	if ev, ok := tr.Put(4, 0); !ok || ev != 2 {
		t.Errorf("put 4 evicted %d (%v), want 2", ev, ok)
	}
	tr.Put(3, 0)                                // order 1, 4, 3
	if ev, ok := tr.Put(5, 0); !ok || ev != 1 { // evicts 1
		t.Errorf("put 5 evicted %d (%v), want 1", ev, ok)
	}
	if tr.Len() != 3 || tr.Has(1) || tr.Has(2) || !tr.Has(3) || !tr.Has(4) || !tr.Has(5) {
		t.Errorf("tier holds the wrong blocks: len %d", tr.Len())
	}
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestTierMatchIsALeadingRun: a prefix hit is the leading blocks the tier
// holds, stopping at the first it does not.
func TestTierMatchIsALeadingRun(t *testing.T) {
	tr := NewTier("disk", 8)
	for _, h := range []uint64{10, 11, 13} {
		tr.Put(h, 0)
	}
	for _, c := range []struct {
		hashes []uint64
		want   int
	}{{[]uint64{10, 11, 12, 13}, 2}, {[]uint64{13}, 1}, {[]uint64{12, 10}, 0}, {nil, 0}} {
		if got := tr.Match(c.hashes); got != c.want {
			t.Errorf("match %v = %d, want %d", c.hashes, got, c.want)
		}
	}
}

// TestTierConserves: under random puts and touches a tier never holds
// more than its capacity, keeps its ring and table in step, and holds
// exactly the blocks a reference LRU does.
func TestTierConserves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	tr := NewTier("store", 17)
	var ref []uint64 // least recent first
	for i := range 5000 {
		h := 1 + rng.Uint64N(40)
		if rng.IntN(4) == 0 {
			tr.Touch([]uint64{h})
			ref = touchRef(ref, h, false)
		} else {
			ev, ok := tr.Put(h, 0)
			before := ref
			ref = touchRef(ref, h, true)
			if len(ref) > 17 {
				if !ok || ev != ref[0] {
					t.Fatalf("step %d: evicted %d (%v), reference evicts %d", i, ev, ok, ref[0])
				}
				ref = ref[1:]
			} else if ok {
				t.Fatalf("step %d: evicted %d with room (%d held)", i, ev, len(before))
			}
		}
		if tr.Len() != len(ref) {
			t.Fatalf("step %d: %d held, reference %d", i, tr.Len(), len(ref))
		}
	}
	for _, h := range ref {
		if !tr.Has(h) {
			t.Errorf("reference holds %d, the tier does not", h)
		}
	}
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
}

// touchRef moves h to the most recent end of ref, appending it if put.
func touchRef(ref []uint64, h uint64, put bool) []uint64 {
	for i, x := range ref {
		if x == h {
			return append(append(ref[:i:i], ref[i+1:]...), h)
		}
	}
	if put {
		return append(ref, h)
	}
	return ref
}

// TestTierPutDoesNotAllocate: once its table exists, a tier at capacity
// evicts and stores without allocating.
func TestTierPutDoesNotAllocate(t *testing.T) {
	tr := NewTier("host", 64)
	for h := uint64(1); h <= 64; h++ {
		tr.Put(h, 0)
	}
	next := uint64(65)
	if n := testing.AllocsPerRun(1000, func() { tr.Put(next, 0); next++ }); n != 0 {
		t.Errorf("Put allocates %.1f times per call", n)
	}
}

// TestTierReserveSharesTheCapacity: reserved room (a host tier's swapped
// KV) and cached blocks together never exceed the capacity; reserving
// evicts the least recently used cached blocks, never reserved room, and
// a wholly reserved tier caches nothing.
func TestTierReserveSharesTheCapacity(t *testing.T) {
	tr := NewTier("host", 4)
	for h := uint64(1); h <= 4; h++ {
		tr.Put(h, int64(h))
	}
	ev, ok := tr.Reserve(3, nil)
	if !ok || len(ev) != 3 || ev[0] != 1 || ev[1] != 2 || ev[2] != 3 {
		t.Fatalf("reserve 3 evicted %v (%v), want [1 2 3]", ev, ok)
	}
	if _, ok := tr.Reserve(2, nil); ok {
		t.Error("reserved 2 more in a tier with 1 unreserved block")
	}
	if ev, ok := tr.Put(9, 0); !ok || ev != 4 || tr.Len() != 1 {
		t.Errorf("put into a tier with one unreserved block evicted %d (%v), holds %d", ev, ok, tr.Len())
	}
	if ready, ok := tr.Lookup(9); !ok || ready != 0 {
		t.Errorf("lookup 9 = %d, %v", ready, ok)
	}
	tr.Reserve(1, nil)
	if _, ok := tr.Put(10, 0); ok || tr.Has(10) || tr.Len() != 0 {
		t.Error("a wholly reserved tier cached a block")
	}
	tr.Unreserve(4)
	for h := uint64(20); h < 24; h++ {
		if _, ev := tr.Put(h, 0); ev {
			t.Errorf("put %d evicted from a tier with room", h)
		}
	}
	if err := tr.Check(); err != nil || tr.Len() != 4 {
		t.Fatalf("after unreserving: %v, len %d", err, tr.Len())
	}
}
