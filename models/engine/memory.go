package engine

// memory is where an instance keeps its sequences' KV, and so what it
// does when room runs out. It has two implementations: paged, vLLM's pool
// of fixed-size blocks with its host tier (paged.go), and slots, a
// wafer-scale decoder's compiled sequence slots (slots.go). The methods
// are called between steps only, with the sequence in the state named.
//
// Cruising keeps the common step off this interface: grow's fast path
// (room in the last block) and a cruise's block-boundary growth
// (growCruising) run before any call to it.
type memory interface {
	// admit gives the head s of queue q room for its next chunk (its
	// prefix-cache hit first) and moves it to the running set with that
	// chunk planned. It reports the tokens scheduled, and false when
	// admission must stop (no room, or the budget without chunking); a
	// sequence refused and taken out of q reports true with no tokens.
	admit(q *deque, s *Seq, budget int) (int, bool)
	// reserve gives the waiting head s, a remote sequence, room for its
	// whole prompt and starts its pull (startPulling); false when the
	// room is not there. A sequence refused instead reports true.
	reserve(s *Seq) bool
	// grow gives running s room for its first tokens tokens, past grow's
	// fast path; false when there is none (the caller preempts).
	grow(s *Seq, tokens int) bool
	// release frees all that s holds, on the device and in the host
	// tier. The caller sets its state.
	release(s *Seq)
	// preemptOut evicts running s to a lower tier and queues it there,
	// reporting false, with nothing changed, when it must be recomputed
	// instead (no tier, or no room in it).
	preemptOut(s *Seq) bool
	// swapIn brings s, the oldest sequence preempted out, back with its
	// next tokens within budget planned; false when the room is not there.
	swapIn(s *Seq, budget int) (int, bool)
	// room is how many more tokens running s can compute before it
	// needs to grow.
	room(s *Seq) int
	// hostBlocks is how many host-tier blocks hold preempted KV.
	hostBlocks() int
}

// grow makes sure the sequence has room for its first tokens tokens: at
// once when its last block has room (the common case, and no call
// through memory), else by the instance's memory. A hybrid model's
// sliding-window groups always go through it, to free what slid out.
func (in *Instance) grow(s *Seq, tokens int) bool {
	if tokens <= len(s.blocks)*in.cfg.BlockSize && in.cfg.SlidingGroups == 0 {
		return true
	}
	return in.mem.grow(s, tokens)
}
