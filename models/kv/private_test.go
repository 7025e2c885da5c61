package kv

import (
	"slices"
	"testing"
)

// TestCommitPrivate follows private blocks through commit, free, re-acquire
// and eviction, auditing the pool after each stage.
func TestCommitPrivate(t *testing.T) {
	p := NewPool(4, 2, true)
	audit := func(stage string) {
		t.Helper()
		if err := p.Check(); err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
	}
	tab, _ := p.Allocate(nil, 3)
	p.CommitPrivate(tab, 0, 11)
	p.CommitPrivate(tab, 1, 12)
	p.CommitPrivate(tab, 1, 12) // same hash again: no-op
	p.Commit(tab, 2, 13)
	audit("committed")
	if got := p.BlockHash(tab[0]); got != 11 {
		t.Errorf("BlockHash = %d, want 11", got)
	}
	if got := p.Peek([]uint64{11}); got != 0 {
		t.Errorf("Peek found a private hash (%d)", got)
	}
	// Only the shared hash is in the index.
	if got := p.CachedBlocks(); got != 1 {
		t.Errorf("CachedBlocks = %d, want 1", got)
	}
	hs := []uint64{11, 12, 99}
	if got := p.Held(tab, hs); got != 2 {
		t.Errorf("Held = %d, want 2 (third block holds 13, not 99)", got)
	}
	p.Free(tab)
	audit("freed")
	// Freed private blocks keep their hashes until evicted.
	if got, free := p.Held(tab, hs), p.FreeAmongBlocks(tab[:2]); got != 2 || free != 2 {
		t.Errorf("after Free: Held = %d, FreeAmongBlocks = %d; want 2, 2", got, free)
	}
	again := p.AcquireBlocks(nil, tab[:2])
	if !slices.Equal(again, tab[:2]) || p.RefCount(tab[0]) != 1 || p.FreeBlocks() != 2 {
		t.Errorf("AcquireBlocks = %v, refcount %d, free %d", again, p.RefCount(tab[0]), p.FreeBlocks())
	}
	audit("re-acquired")
	p.Free(again)
	before := p.Stats().Evicted
	if _, ok := p.Allocate(nil, 4); !ok {
		t.Fatal("Allocate of all blocks failed")
	}
	audit("evicted")
	// Blocks 0, 1 (private) and 2 (shared) lose their hashes.
	if got := p.Stats().Evicted - before; got != 3 || p.Held(tab, hs) != 0 {
		t.Errorf("evicted %d, Held %d; want 3, 0", got, p.Held(tab, hs))
	}
}

// TestPrivateQueueOrder checks that a freed private block goes to the tail
// of the free queue like a shared cached one. Pool of 3: Free walks 2, 1, 0:
// 2 (shared) to the tail → [2]; 1 (uncached) to the head → [1 2]; 0
// (private) to the tail → [1 2 0], the order Allocate returns.
func TestPrivateQueueOrder(t *testing.T) {
	p := NewPool(3, 1, true)
	tab, _ := p.Allocate(nil, 3)
	p.CommitPrivate(tab, 0, 5)
	p.Commit(tab, 2, 7)
	p.Free(tab)
	got, _ := p.Allocate(nil, 3)
	if want := []BlockID{1, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("allocation order %v, want %v", got, want)
	}
}

func TestCommitPrivateNoCaching(t *testing.T) {
	p := NewPool(2, 1, false)
	tab, _ := p.Allocate(nil, 1)
	p.CommitPrivate(tab, 0, 5)
	if p.BlockHash(tab[0]) != 0 || p.Held(tab, []uint64{5}) != 0 {
		t.Error("CommitPrivate stored a hash without prefix caching")
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

func TestPrivatePanics(t *testing.T) {
	used := func() (*Pool, []BlockID) {
		p := NewPool(4, 2, true)
		tab, _ := p.Allocate(nil, 2)
		return p, tab
	}
	for name, f := range map[string]func(){
		"hash 0":          func() { p, tab := used(); p.CommitPrivate(tab, 0, 0) },
		"free block":      func() { p, tab := used(); p.Free(tab); p.CommitPrivate(tab, 0, 5) },
		"different hash":  func() { p, tab := used(); p.CommitPrivate(tab, 0, 5); p.CommitPrivate(tab, 0, 6) },
		"after Commit":    func() { p, tab := used(); p.Commit(tab, 0, 5); p.CommitPrivate(tab, 0, 6) },
		"acquire nothing": func() { p, tab := used(); p.AcquireBlocks(nil, tab[:1]) },
		"out of range":    func() { p, _ := used(); p.RefCount(BlockID(p.NumBlocks())) },
	} {
		t.Run(name, func(t *testing.T) { mustPanic(t, f) })
	}
}
