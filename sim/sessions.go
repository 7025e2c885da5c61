package sim

import "fmt"

// Multi-turn sessions (a Config.Source that is a SessionSource) are paced
// like a chat user or an agent: the source's Next yields each session's
// first turn at the session's start, in non-decreasing time, as an open-loop
// source does; when a turn ends — completed, rejected, dropped, failed or
// abandoned, at the instant its client sees the end (Record.FinishNs) — the
// session's next turn is read from NextTurn and arrives its think time
// later (and not in the past). A chat client sends the next message only
// after the previous response has streamed back, and an agent calls the
// model again only after its tool returns; the outcome of the previous turn
// does not change what the source sends (it is the conversation as
// recorded or generated), so the workload is the same on every fleet. The
// turns waiting for their send time are held in c.turns, one slot per
// session between turns: O(sessions in progress).

// SessionSource is a Source of multi-turn sessions. Next yields every
// session's first turn (Turn 1, Session set, ArrivalNs its start) in
// non-decreasing arrival order. NextTurn fills r with the turn after the one
// of session that has just ended and returns the think time before it is
// sent (≥ 0, from the end of the previous turn as its client sees it); it
// reports false when the session has no more turns. Request IDs are set by
// the simulator (dense, in arrival order). An error ends the run.
type SessionSource interface {
	Source
	NextTurn(session int32, r *Request) (thinkNs int64, ok bool, err error)
}

// isSessions reports whether src yields sessions.
func isSessions(src Source) bool {
	_, ok := src.(SessionSource)
	return ok
}

// sessionState holds the turns scheduled to arrive and not yet arrived.
type sessionState struct {
	src   SessionSource // nil: the source has no sessions
	turns []Request     // slot i is carried by the arrival event with arg i+1
	free  []int32       // free slots of turns
}

// initSessions notes whether the source yields sessions.
func (c *cluster) initSessions() {
	c.sessions.src, _ = c.cfg.Source.(SessionSource)
}

// nextTurn schedules the next turn of the session whose turn ended, as its
// client sees it, at endNs.
func (c *cluster) nextTurn(session int32, endNs int64) {
	s := &c.sessions
	var r Request
	thinkNs, ok, err := s.src.NextTurn(session, &r)
	switch {
	case err != nil:
		c.err = err
		return
	case !ok:
		return
	case thinkNs < 0:
		c.err = fmt.Errorf("sim: session %d turn %d has a negative think time (%d ns)", session, r.Turn, thinkNs)
		return
	}
	if c.err = c.checkRequest(&r); c.err != nil {
		return
	}
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
		s.turns[slot] = r
	} else {
		slot = int32(len(s.turns))
		s.turns = append(s.turns, r)
	}
	r.ArrivalNs = max(c.nowNs, endNs+thinkNs)
	s.turns[slot].ArrivalNs = r.ArrivalNs
	c.pushArrival(r.ArrivalNs, slot+1)
}

// takeTurn removes and returns the turn an arrival event with arg > 0
// carries.
func (c *cluster) takeTurn(arg int32) Request {
	s := &c.sessions
	r := s.turns[arg-1]
	s.turns[arg-1] = Request{}
	s.free = append(s.free, arg-1)
	return r
}
