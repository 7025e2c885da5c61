package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// keyHomedAt returns a nonzero key, distinct from those in used, whose home
// slot in x is want, found by trying successive mixed counters.
func keyHomedAt(x *index, want uint64, used map[uint64]bool, ctr *uint64) uint64 {
	for {
		*ctr++
		k := mix64(*ctr) | 1
		if x.home(k) == want && !used[k] {
			used[k] = true
			return k
		}
	}
}

// allocatedIndex is newIndex with its slots, for tests that place keys by
// their home slot before any put.
func allocatedIndex(capacity int) index {
	x := newIndex(capacity)
	x.allocate()
	return x
}

func TestIndexSizing(t *testing.T) {
	for _, c := range []struct{ capacity, slots int }{
		{0, 2}, {1, 2}, {2, 4}, {3, 8}, {4, 8}, {5, 16}, {4096, 8192}, {30000, 65536},
	} {
		x := newIndex(c.capacity)
		if x.slots != nil {
			t.Errorf("capacity %d: slots allocated before the first put", c.capacity)
		}
		x.allocate()
		if len(x.slots) != c.slots || x.mask != uint64(c.slots-1) || 1<<(64-x.shift) != c.slots {
			t.Errorf("capacity %d: %d slots, mask %#x, shift %d; want %d slots", c.capacity, len(x.slots), x.mask, x.shift, c.slots)
		}
	}
}

func TestIndexBasics(t *testing.T) {
	x := newIndex(3)
	if _, ok := x.get(0); ok {
		t.Error("get(0) found something in an empty table")
	}
	if !x.put(7, 1) || x.put(7, 2) || !x.put(9, 3) {
		t.Fatal("put: want true, false (present), true")
	}
	if b, ok := x.get(7); !ok || b != 1 {
		t.Errorf("get(7) = %d, %v; want 1, true (first put wins)", b, ok)
	}
	if _, ok := x.get(0); ok {
		t.Error("get(0) found something")
	}
	if x.len() != 2 || !x.del(7) || x.del(7) || x.del(0) || x.len() != 1 {
		t.Errorf("del: len %d after deleting 7", x.len())
	}
	if b, ok := x.get(9); !ok || b != 3 {
		t.Errorf("get(9) = %d, %v; want 3, true", b, ok)
	}
	x.put(11, 4)
	x.put(13, 5)
	mustPanic(t, func() { x.put(15, 6) }) // capacity 3 reached
	mustPanic(t, func() { x.put(0, 6) })
	if err := x.check(); err != nil {
		t.Error(err)
	}
}

// TestIndexWrapAndShift builds a probe run that wraps past the last slot and
// deletes from its middle: entries whose home precedes the hole must shift
// back, the one sitting in its own home must not move.
func TestIndexWrapAndShift(t *testing.T) {
	x := allocatedIndex(8) // 16 slots
	used, ctr := map[uint64]bool{}, uint64(0)
	last := x.mask
	// Run 14 15 0 1 2: a, b home at 14; c home at 15; d home at 0; e home at 14.
	a := keyHomedAt(&x, last-1, used, &ctr)
	b := keyHomedAt(&x, last-1, used, &ctr)
	c := keyHomedAt(&x, last, used, &ctr)
	d := keyHomedAt(&x, 0, used, &ctr)
	e := keyHomedAt(&x, last-1, used, &ctr)
	for i, k := range []uint64{a, b, c, d, e} {
		x.put(k, BlockID(i))
	}
	wantAt := func(k, slot uint64) {
		t.Helper()
		if at, ok := x.find(k); !ok || at != slot {
			t.Errorf("key %#x in slot %d (found %v), want %d", k, at, ok, slot)
		}
	}
	wantAt(a, 14)
	wantAt(b, 15)
	wantAt(c, 0)
	wantAt(d, 1)
	wantAt(e, 2)
	x.del(b) // hole at 15: c (home 15) moves, d (home 0) moves, e (home 14) moves
	wantAt(a, 14)
	wantAt(c, 15)
	wantAt(d, 0)
	wantAt(e, 1)
	x.del(a) // hole at 14: c and d stay in their homes 15 and 0, e (home 14) moves back
	wantAt(c, 15)
	wantAt(d, 0)
	wantAt(e, 14)
	if x.slots[1].key != noneHash || x.len() != 3 {
		t.Errorf("slot 1 not emptied or len %d != 3", x.len())
	}
	if err := x.check(); err != nil {
		t.Error(err)
	}
}

// TestIndexRandomOps compares long random put/del/get sequences with a Go
// map, on small tables whose candidate keys crowd the last two and first two
// home slots (long runs that wrap around the end of the array) or spread at
// random, auditing the table after every step.
func TestIndexRandomOps(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 7))
		capacity := 1 + r.IntN(40)
		x, ref := allocatedIndex(capacity), map[uint64]BlockID{}
		keys, used, ctr := make([]uint64, 3*capacity), map[uint64]bool{}, seed<<32
		for i := range keys {
			homes := []uint64{x.mask - 1, x.mask, 0, 1, r.Uint64() & x.mask}
			keys[i] = keyHomedAt(&x, homes[r.IntN(len(homes))], used, &ctr)
		}
		for step := range 4000 {
			k := keys[r.IntN(len(keys))]
			_, had := ref[k]
			switch r.IntN(3) {
			case 0:
				if !had && len(ref) == capacity {
					break
				}
				if x.put(k, BlockID(step)) == had {
					t.Fatalf("seed %d step %d: put(%#x) stored %v with key present %v", seed, step, k, !had, had)
				}
				if !had {
					ref[k] = BlockID(step)
				}
			case 1:
				if x.del(k) != had {
					t.Fatalf("seed %d step %d: del(%#x) != %v", seed, step, k, had)
				}
				delete(ref, k)
			}
			if err := auditIndex(&x, ref, keys); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
	}
}

// auditIndex checks x's structure, its length, and get on every candidate.
func auditIndex(x *index, ref map[uint64]BlockID, keys []uint64) error {
	if err := x.check(); err != nil {
		return err
	}
	if x.len() != len(ref) {
		return fmt.Errorf("len %d, want %d", x.len(), len(ref))
	}
	for _, k := range keys {
		got, ok := x.get(k)
		if want, had := ref[k]; ok != had || got != want {
			return fmt.Errorf("get(%#x) = %d, %v; want %d, %v", k, got, ok, want, had)
		}
	}
	n := 0
	for k, b := range x.all {
		if ref[k] != b {
			return fmt.Errorf("all yields %#x → %d, want %d", k, b, ref[k])
		}
		n++
	}
	if n != len(ref) {
		return fmt.Errorf("all yields %d entries, want %d", n, len(ref))
	}
	return nil
}

func TestIndexCheckDetectsCorruption(t *testing.T) {
	for name, corrupt := range map[string]func(x *index){
		"count":     func(x *index) { x.n++ },
		"duplicate": func(x *index) { i, _ := x.find(99); x.slots[i] = slot{key: 5, val: 1} },
		"misplaced": func(x *index) { i, _ := x.find(5); x.slots[i] = slot{}; x.slots[(i+3)&x.mask] = slot{key: 5} },
	} {
		t.Run(name, func(t *testing.T) {
			x := newIndex(4)
			x.put(5, 1)
			if err := x.check(); err != nil {
				t.Fatalf("healthy table: %v", err)
			}
			corrupt(&x)
			if x.check() == nil {
				t.Error("corruption not detected")
			}
		})
	}
}

func TestIndexNoAlloc(t *testing.T) {
	x := newIndex(1000)
	k := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		k++
		x.put(mix64(k)|1, 1)
		x.get(mix64(k) | 1)
		x.del(mix64(k) | 1)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per op, want 0", allocs)
	}
}

// BenchmarkIndexChurn measures the simulator's pattern on a full table for a
// 30,000-block pool: per op, delete the oldest key (eviction), insert a new
// one (commit) and look up a live one (match).
func BenchmarkIndexChurn(b *testing.B) {
	const n = 30000
	x := newIndex(n)
	ring := make([]uint64, n)
	for i := range ring {
		ring[i] = mix64(uint64(i)) | 1
		x.put(ring[i], BlockID(i))
	}
	ctr, i := uint64(n), 0
	b.ReportAllocs()
	for b.Loop() {
		x.del(ring[i])
		ctr++
		ring[i] = mix64(ctr) | 1
		x.put(ring[i], BlockID(i))
		i++
		if i == n {
			i = 0
		}
		if _, ok := x.get(ring[(i*7919)%n]); !ok {
			b.Fatal("miss")
		}
	}
}
