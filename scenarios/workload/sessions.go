package workload

import (
	"errors"
	"math"
	"math/rand/v2"

	"handoff/models/kv"
	"handoff/sim"
)

// Sessions is a generated multi-turn workload: Sessions conversations whose
// starts follow Arrival; each draws its number of turns from Turns, and per
// turn its new input and its output length; turn k's prompt is the shared
// system prompt, every earlier turn's input and output, then turn k's input.
// Turn k > 1 is sent ThinkMs (drawn per turn, milliseconds; omitted = 0)
// after turn k−1 ended.
type Sessions struct {
	Sessions           int     `yaml:"sessions"`
	Arrival            Arrival `yaml:"arrival"` // of session starts
	Turns              Length  `yaml:"turns"`
	InputTokens        Length  `yaml:"input_tokens"`  // new input per turn
	OutputTokens       Length  `yaml:"output_tokens"` // per turn
	ThinkMs            *Length `yaml:"think_ms,omitempty"`
	SystemPromptTokens int     `yaml:"system_prompt_tokens"` // shared by every session
}

// Limits of a session workload: turns fit Record.Turn (and the segment IDs
// below), sessions fit Record.Session.
const (
	maxTurns    = 1024
	maxSessions = math.MaxInt32
)

// Segment IDs of session content (kinds 3–5, after shared_prefix's): one
// system prompt for all sessions, and one segment per turn's input and
// output, so that turn k's prompt repeats turn k−1's content segment for
// segment and its blocks hash alike.
const (
	segSessionSystem uint64 = 3 << segKindShift
	segSessionInput  uint64 = 4 << segKindShift // | session<<16 | turn
	segSessionOutput uint64 = 5 << segKindShift // | session<<16 | turn
)

// Validate checks s; errors name fields relative to s ("turns.max: ...").
func (s Sessions) Validate() error {
	var errs []error
	if s.Sessions < 1 || s.Sessions > maxSessions {
		errs = append(errs, fieldErr("sessions", "must be in [1, %d], got %d", maxSessions, s.Sessions))
	}
	if s.SystemPromptTokens < 0 || s.SystemPromptTokens > maxTokens/2 {
		errs = append(errs, fieldErr("system_prompt_tokens", "must be in [0, %d], got %d", maxTokens/2, s.SystemPromptTokens))
	}
	errs = append(errs, prefixed("arrival", s.Arrival.Validate()))
	errs = append(errs, prefixed("turns", s.Turns.Validate()))
	if err := s.Turns.Validate(); err == nil && s.Turns.upper() > maxTurns {
		errs = append(errs, fieldErr("turns", "must be bounded by %d (set max, value or values), got %d", maxTurns, s.Turns.upper()))
	}
	errs = append(errs, prefixed("input_tokens", s.InputTokens.Validate()))
	errs = append(errs, prefixed("output_tokens", s.OutputTokens.Validate()))
	if s.ThinkMs != nil {
		errs = append(errs, prefixed("think_ms", s.ThinkMs.ValidateTime()))
	}
	return errors.Join(errs...)
}

// upper is the largest value a validated l draws (maxTokens when unbounded).
func (l Length) upper() int {
	switch l.Dist {
	case DistFixed:
		return l.Value
	case DistEmpirical:
		hi := 0
		for _, v := range l.Values {
			hi = max(hi, v)
		}
		return hi
	}
	if l.Max == 0 {
		return maxTokens
	}
	return l.Max
}

// session is one session's plan, drawn whole at its start.
type session struct {
	chain   []kv.Segment // [system], input 1, output 1, input 2, …, input n
	outputs []int        // output length per turn
	thinkNs []int64      // think time before each turn (index 0 unused)
	next    int          // the next turn to send, from 0
	sys     int          // 1 with a system prompt segment, else 0
	id      int32
}

// request fills r with turn t (from 0) of the session: its prefix is the
// chain up to and including turn t's input, so every token of the prompt is
// shared content, and its output is named by the segment the next turn
// repeats. The last turn's answer, which no prompt repeats, stays unnamed:
// caching its blocks would change nothing but the work of indexing them.
func (p *session) request(r *sim.Request, t int) {
	n := p.sys + 2*t + 1
	*r = sim.Request{PromptTokens: prefixTokensOf(p.chain[:n]), OutputTokens: p.outputs[t],
		Prefix: p.chain[:n:n], Session: p.id, Turn: uint16(t + 1)}
	if t+1 < len(p.outputs) {
		r.Output = p.output(t)
	}
}

// output is the segment of turn t's (from 0) answer, as the next turn's
// prompt repeats it.
func (p *session) output(t int) kv.Segment {
	return kv.Segment{ID: segSessionOutput | uint64(p.id)<<16 | uint64(t+1), Tokens: p.outputs[t]}
}

// prefixTokensOf sums the segments' tokens.
func prefixTokensOf(segs []kv.Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Tokens
	}
	return n
}

// add appends the next turn with the given lengths and think time; it
// reports false, adding nothing, when a later turn's prompt would pass
// maxTokens (the first is bounded by validation).
func (p *session) add(input, output int, thinkNs int64) bool {
	t := len(p.outputs) // turns are numbered from 1 in the IDs: this is turn t+1
	if t > 0 {
		p.chain = append(p.chain, p.output(t-1))
		if prefixTokensOf(p.chain)+input > maxTokens {
			p.chain = p.chain[:len(p.chain)-1]
			return false
		}
	}
	p.chain = append(p.chain, kv.Segment{ID: segSessionInput | uint64(p.id)<<16 | uint64(t+1), Tokens: input})
	p.outputs, p.thinkNs = append(p.outputs, output), append(p.thinkNs, thinkNs)
	return true
}

// sessionBook holds the sessions in progress and hands out their turns.
type sessionBook struct {
	open map[int32]*session
}

// start registers p and fills r with its first turn.
func (b *sessionBook) start(p *session, r *sim.Request) {
	if b.open == nil {
		b.open = map[int32]*session{}
	}
	b.open[p.id] = p
	p.request(r, 0)
	p.next = 1
}

// NextTurn implements sim.SessionSource for the sessions in b.
func (b *sessionBook) NextTurn(id int32, r *sim.Request) (int64, bool, error) {
	p := b.open[id]
	if p == nil {
		return 0, false, nil
	}
	if p.next == len(p.outputs) {
		delete(b.open, id)
		return 0, false, nil
	}
	p.request(r, p.next)
	p.next++
	return p.thinkNs[p.next-1], true, nil
}

// NewSessions returns a source that generates s: session i starts at the
// i-th arrival of s.Arrival (the first at 0); at its start it draws its
// turn count, then per turn the input length, the output length and (for
// turns after the first) the think time, so one seed gives the same
// conversations on every fleet. A session ends early when its next prompt
// would pass 2³⁰ tokens. It returns s.Validate()'s error, if any. Cost per
// session: O(turns) memory while it is in progress; per turn O(1), no
// allocation.
func NewSessions(s Sessions, rng *rand.Rand) (sim.SessionSource, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	g := &sessionGen{spec: s, rng: rng, gaps: newGapSampler(s.Arrival, rng), turns: newLengthSampler(s.Turns),
		input: newLengthSampler(s.InputTokens), output: newLengthSampler(s.OutputTokens)}
	if s.ThinkMs != nil {
		g.think = newTimeSampler(*s.ThinkMs)
	}
	return g, nil
}

type sessionGen struct {
	sessionBook
	spec                 Sessions
	rng                  *rand.Rand
	gaps                 *gapSampler
	turns, input, output *lengthSampler
	think                *lengthSampler // nil: no think time
	started              int32
	timeNs               float64 // next session start, unrounded
}

// Next implements sim.Source: the next session's first turn.
func (g *sessionGen) Next(r *sim.Request) (bool, error) {
	if int(g.started) >= g.spec.Sessions {
		return false, nil
	}
	if g.timeNs > maxTraceSpanNs {
		return false, errors.New("workload: session starts passed 100 years; the rate is too low")
	}
	p := g.plan()
	g.start(p, r)
	r.ArrivalNs = int64(math.Round(g.timeNs))
	g.timeNs += g.gaps.draw()
	return true, nil
}

// plan draws the next session.
func (g *sessionGen) plan() *session {
	n := g.turns.draw(g.rng)
	p := &session{id: g.started, chain: make([]kv.Segment, 0, 2*n+1)}
	g.started++
	if g.spec.SystemPromptTokens > 0 {
		p.chain = append(p.chain, kv.Segment{ID: segSessionSystem, Tokens: g.spec.SystemPromptTokens})
		p.sys = 1
	}
	for t := range n {
		in, out := g.input.draw(g.rng), g.output.draw(g.rng)
		var thinkNs int64
		if g.think != nil && t > 0 {
			thinkNs = int64(g.think.draw(g.rng)) * 1e6
		}
		if !p.add(in, out, thinkNs) {
			break
		}
	}
	return p
}
