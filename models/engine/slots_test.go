package engine

import "testing"

func slotInst(t *testing.T, p Pressure, layouts ...[]SlotClass) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: 4096, MaxSeqs: 64, MaxModelLen: 1 << 20, Layouts: layouts, Pressure: p,
		RecompileNs: 1000}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

func TestSlotModeTakesTheSmallestSlotThatHoldsTheWholeLife(t *testing.T) {
	in := slotInst(t, PressureQueue, []SlotClass{{Count: 1, ContextTokens: 8192}, {Count: 2, ContextTokens: 2048}})
	if cfg := in.Config(); cfg.CapacityTokens() != 8192 {
		t.Fatalf("capacity %d, want the largest slot, 8192", cfg.CapacityTokens())
	}
	a, b, c := seq(in, 1, 1000, 1000), seq(in, 2, 1000, 1000), seq(in, 3, 1000, 1000) // need 2000 each
	for _, s := range []*Seq{a, b, c} {
		in.Enqueue(s, 0)
	}
	step(t, in, 1)
	// a and b take the two 2048-token slots; c falls back to the 8192 one.
	if a.slotClass != 1 || b.slotClass != 1 || c.slotClass != 0 || in.Running() != 3 {
		t.Fatalf("classes %d %d %d, running %d", a.slotClass, b.slotClass, c.slotClass, in.Running())
	}
	d := seq(in, 4, 10, 10)
	in.Enqueue(d, 1)
	step(t, in, 2)
	if in.Waiting() != 1 || d.Blocks() != 0 {
		t.Fatalf("queue policy: d must wait for a slot (waiting %d)", in.Waiting())
	}
	check(t, in)
}

func TestSlotModeNeverPreempts(t *testing.T) {
	in := slotInst(t, PressureQueue, []SlotClass{{Count: 1, ContextTokens: 100}})
	s := seq(in, 1, 10, 90)
	in.Enqueue(s, 0)
	for now := int64(1); !s.Finished(); now++ {
		step(t, in, now)
	}
	if s.Preemptions != 0 || in.Pool().UsedBlocks() != 0 || in.mem.(*slots).free[0] != 1 {
		t.Fatalf("preemptions %d, used %d, free slots %v", s.Preemptions, in.Pool().UsedBlocks(), in.mem.(*slots).free)
	}
}

func TestSlotModeRejectRefusesWhatNoFreeSlotTakes(t *testing.T) {
	in := slotInst(t, PressureReject, []SlotClass{{Count: 1, ContextTokens: 100}})
	a, b := seq(in, 1, 10, 10), seq(in, 2, 10, 10)
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	_, res := in.Schedule(0)
	if len(res.Rejected) != 1 || res.Rejected[0] != b || in.Running() != 1 || in.Waiting() != 0 {
		t.Fatalf("rejected %d, running %d, waiting %d", len(res.Rejected), in.Running(), in.Waiting())
	}
}

func TestSlotModeRecompileDrainsPausesAndSwitchesLayout(t *testing.T) {
	in := slotInst(t, PressureRecompile,
		[]SlotClass{{Count: 4, ContextTokens: 1024}}, []SlotClass{{Count: 1, ContextTokens: 8192}})
	a := seq(in, 1, 100, 3)
	long := seq(in, 2, 4000, 10) // needs the 8192 layout
	short := seq(in, 3, 10, 2)
	in.Enqueue(a, 0)
	in.Enqueue(long, 0)
	in.Enqueue(short, 0)
	step(t, in, 1) // a runs; long cannot fit: drain begins; short waits behind it
	if !in.mem.(*slots).draining || short.Blocks() != 0 || in.RecompileDue() {
		t.Fatal("want a drain in progress, nothing admitted behind the head, no pause while a runs")
	}
	for now := int64(2); !a.Finished(); now++ {
		step(t, in, now)
	}
	if !in.RecompileDue() || in.Stats().Recompiles != 1 {
		t.Fatal("drained: a recompile pause is due")
	}
	if b, _ := in.Schedule(0); b != nil {
		t.Fatal("scheduled during the pause")
	}
	in.Recompiled()
	step(t, in, 10)
	in.settleFrom(0) // long may be cruising: bring its counters up to date
	if long.slotClass != 0 || in.mem.(*slots).layout != 1 || long.Generated != 1 {
		t.Fatalf("after recompiling: layout %d, long in class %d with %d tokens", in.mem.(*slots).layout, long.slotClass, long.Generated)
	}
}
