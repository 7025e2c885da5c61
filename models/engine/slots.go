package engine

import (
	"fmt"
	"math"
)

// Wafer-scale decoders have no paged KV pool. A compiled program fixes a
// set of sequence slots, each with a maximum context; a sequence's KV lives
// in its slot for its whole life. Slot mode models that: admission takes a
// free slot able to hold the sequence's prompt plus every token it may
// generate, nothing grows afterwards, and nothing is ever preempted. When
// no slot fits, Config.Pressure decides.

// SlotClass is a group of identical slots in a compiled layout.
type SlotClass struct {
	Count         int // slots
	ContextTokens int // longest context a slot holds
}

// Pressure is what a slot-mode instance does with a sequence no free slot
// can take.
type Pressure uint8

// The pressure policies.
const (
	PressureQueue     Pressure = iota // wait for a slot (head-of-line)
	PressureReject                    // refuse it; the router re-sends it (RFC #24256 style)
	PressureRecompile                 // drain, pause, and come back with the next layout that holds it
)

// String names the policy as scenarios do.
func (p Pressure) String() string { return [...]string{"queue", "reject", "recompile"}[p] }

// slots is a wafer-scale decoder's memory: a compiled layout of sequence
// slots, Config.Layouts, with its occupancy. One pool block stands for
// each slot a sequence holds, so that the pool's audits cover slot mode.
type slots struct {
	in         *Instance
	layout     int   // index into Config.Layouts
	free       []int // per class of the current layout
	draining   bool  // recompile: admit nothing until the running set empties
	paused     bool  // recompiling: admit nothing until Recompiled
	nextLayout int   // recompile: the layout to come back with
}

// slotMode reports whether the instance runs compiled slots.
func (c *Config) slotMode() bool { return len(c.Layouts) > 0 }

// validateSlots checks the layouts of a slot-mode configuration.
func (c *Config) validateSlots() error {
	for i, l := range c.Layouts {
		if len(l) == 0 {
			return fmt.Errorf("slot layout %d is empty", i)
		}
		for _, sc := range l {
			if sc.Count <= 0 || sc.ContextTokens <= 0 {
				return fmt.Errorf("slot layout %d has a class of %d slots of %d tokens", i, sc.Count, sc.ContextTokens)
			}
		}
	}
	return nil
}

// maxSlots is the most slots any layout has: the size of the instance's
// slot pool (one pool block per slot).
func (c *Config) maxSlots() int {
	n := 0
	for _, l := range c.Layouts {
		m := 0
		for _, sc := range l {
			m += sc.Count
		}
		n = max(n, m)
	}
	return n
}

// newSlots returns the memory of a slot-mode instance: the first layout,
// every slot free.
func newSlots(in *Instance) *slots {
	st := &slots{in: in}
	st.reset(0)
	return st
}

// reset makes layout i current, all slots free.
func (st *slots) reset(i int) {
	st.layout, st.draining, st.paused = i, false, false
	st.free = st.free[:0]
	for _, sc := range st.in.cfg.Layouts[i] {
		st.free = append(st.free, sc.Count)
	}
}

// need is the context a sequence's slot must hold: its prompt plus every
// token it may still generate here.
func (s *Seq) need() int { return s.PromptTokens + s.MaxNew }

// best returns the smallest class of the current layout with a free slot
// for need tokens, or -1.
func (st *slots) best(need int) int {
	classes := st.in.cfg.Layouts[st.layout]
	best := -1
	for k, sc := range classes {
		if st.free[k] > 0 && sc.ContextTokens >= need &&
			(best < 0 || sc.ContextTokens < classes[best].ContextTokens) {
			best = k
		}
	}
	return best
}

// layoutFor returns the first layout (from the current one on) with a
// class able to hold need tokens, or -1.
func (st *slots) layoutFor(need int) int {
	n := len(st.in.cfg.Layouts)
	for d := range n {
		i := (st.layout + d) % n
		for _, sc := range st.in.cfg.Layouts[i] {
			if sc.ContextTokens >= need {
				return i
			}
		}
	}
	return -1
}

// take gives s a slot for its whole life, or reports why not: false with
// nothing changed when it must wait. Under the reject policy a sequence no
// free slot takes is refused from queue q; under recompile, one the
// current layout cannot hold at all starts a drain.
func (st *slots) take(q *deque, s *Seq) (taken, rejected bool) {
	if st.draining || st.paused {
		return false, false
	}
	in := st.in
	if k := st.best(s.need()); k >= 0 {
		st.free[k]--
		s.slotClass = k
		s.blocks, _ = in.pool.Allocate(s.blocks[:0], 1) // one pool block stands for the slot
		return true, false
	}
	switch in.cfg.Pressure {
	case PressureReject:
		in.reject(q, s)
		return false, true
	case PressureRecompile:
		if l := st.layoutFor(s.need()); l >= 0 && l != st.layout {
			st.draining = true
			st.nextLayout = l
		}
	}
	return false, false
}

// admit is memory.admit: a sequence without a slot takes one (or waits,
// or is refused), then computes its next chunk.
func (st *slots) admit(q *deque, s *Seq, budget int) (int, bool) {
	in := st.in
	if len(s.blocks) == 0 {
		taken, rejected := st.take(q, s)
		if rejected {
			return 0, true // refused: try the next
		}
		if !taken {
			return 0, false
		}
	}
	n := min(s.Tokens()-s.computed, budget)
	if in.cfg.NoChunkedPrefill && n < s.Tokens()-s.computed {
		return 0, false
	}
	if !s.admitted {
		s.admitted = true
		in.stats.PromptTokensSeen += int64(s.PromptTokens)
	}
	in.startRunning(q, s, n)
	return n, true
}

// reserve is memory.reserve: the whole prompt's KV will be pulled into a
// slot.
func (st *slots) reserve(s *Seq) bool {
	taken, rejected := st.take(&st.in.waiting, s)
	if rejected {
		return true // refused and out of the queue: carry on admitting
	}
	if !taken {
		return false
	}
	st.in.startPulling(s, s.PromptTokens)
	return true
}

// grow is memory.grow: the slot holds the whole life of the sequence.
func (st *slots) grow(*Seq, int) bool { return true }

// room is memory.room: the slot holds every token the sequence may
// generate here.
func (st *slots) room(*Seq) int { return math.MaxInt32 }

// release is memory.release: the slot, if s holds one, and its block.
func (st *slots) release(s *Seq) {
	if len(s.blocks) > 0 {
		st.free[s.slotClass]++
	}
	st.in.pool.FreeSettled(s.blocks, s.shared, s.committed)
	s.blocks = s.blocks[:0]
}

// preemptOut is memory.preemptOut; slots never run out, so nothing is
// ever preempted.
func (st *slots) preemptOut(*Seq) bool { panic("engine: preempting in slot mode") }

// swapIn is memory.swapIn; nothing is ever swapped out of a slot.
func (st *slots) swapIn(*Seq, int) (int, bool) { panic("engine: swapping in in slot mode") }

// hostBlocks is memory.hostBlocks: slot mode has no host tier.
func (st *slots) hostBlocks() int { return 0 }

// MayRefuse reports whether the instance may refuse a sequence it is
// handed before taking its KV (slot mode under the reject policy).
func (in *Instance) MayRefuse() bool {
	return in.cfg.slotMode() && in.cfg.Pressure == PressureReject
}

// RecompileDue reports whether a draining instance has emptied and should
// now pause to recompile; the caller waits Config.RecompileNs, then calls
// Recompiled.
func (in *Instance) RecompileDue() bool {
	st, ok := in.mem.(*slots)
	if !ok || !st.draining || len(in.running) > 0 || in.inStep || in.pulling > 0 || in.ready.len() > 0 {
		return false
	}
	st.draining, st.paused = false, true
	in.stats.Recompiles++
	return true
}

// Recompiling reports whether the instance is in a recompile pause: it
// admits nothing until Recompiled, and waits for no other instance.
func (in *Instance) Recompiling() bool {
	st, ok := in.mem.(*slots)
	return ok && st.paused
}

// Recompiled ends a recompile pause: the instance comes back with the
// layout its queue head needed, every slot free.
func (in *Instance) Recompiled() {
	st, ok := in.mem.(*slots)
	if !ok || !st.paused {
		panic("engine: recompiled while not paused")
	}
	st.reset(st.nextLayout)
}
