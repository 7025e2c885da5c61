package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"

	"handoff/models/kv"
	"handoff/sim"
)

// Segment IDs that generators assign carry their kind in the top byte, so a
// system prompt can never share an ID with a question, and neither with the
// small ids that traces such as Mooncake use (kind 0).
const (
	segKindShift              = 56
	segSystemPrompt    uint64 = 1 << segKindShift // | group index
	segQuestion        uint64 = 2 << segKindShift // | request ID
	maxSharedPrefixReq        = 1 << 40           // bound on requests (and so on IDs)
)

// Validate checks s; errors name fields relative to s ("stages[1].rate: ...").
func (s SharedPrefix) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) { errs = append(errs, fieldErr(field, format, args...)) }
	if s.NumGroups < 1 || s.NumGroups > 1<<20 {
		add("num_unique_system_prompts", "must be in [1, %d], got %d", 1<<20, s.NumGroups)
	}
	if s.UsersPerGroup < 1 || s.UsersPerGroup > 1<<20 {
		add("num_users_per_system_prompt", "must be in [1, %d], got %d", 1<<20, s.UsersPerGroup)
	}
	if s.SystemPromptLen < 0 || s.SystemPromptLen > maxTokens {
		add("system_prompt_len", "must be in [0, %d], got %d", maxTokens, s.SystemPromptLen)
	}
	if s.QuestionLen < 0 || s.QuestionLen > maxTokens {
		add("question_len", "must be in [0, %d], got %d", maxTokens, s.QuestionLen)
	}
	if s.SystemPromptLen+s.QuestionLen < 1 {
		add("question_len", "system_prompt_len + question_len must be ≥ 1")
	}
	if s.OutputLen < 1 || s.OutputLen > maxTokens {
		add("output_len", "must be in [1, %d], got %d", maxTokens, s.OutputLen)
	}
	if len(s.Stages) == 0 {
		add("stages", "must list at least one stage")
	}
	total := 0.0
	for i, st := range s.Stages {
		errs = append(errs, prefixed(indexed("stages", i), st.Validate()))
		total += st.count()
	}
	if total > maxSharedPrefixReq {
		add("stages", "send %g requests in all, more than the limit of %d", total, int64(maxSharedPrefixReq))
	}
	return errors.Join(errs...)
}

// Validate checks st; errors name fields relative to st ("rate: ...").
func (st Stage) Validate() error {
	var errs []error
	if st.Duration <= 0 {
		errs = append(errs, fieldErr("duration", "must be > 0"))
	}
	if !(st.Rate >= 0) || math.IsInf(float64(st.Rate), 0) {
		errs = append(errs, fieldErr("rate", "must be ≥ 0 and finite"))
	}
	return errors.Join(errs...)
}

// count is the number of requests the stage sends: round(rate × duration).
func (st Stage) count() float64 {
	return math.Round(float64(st.Rate) * float64(st.Duration) / 1e9)
}

func indexed(name string, i int) string {
	return name + "[" + strconv.Itoa(i) + "]"
}

// NewSharedPrefix returns a source that generates s. User u (0 ≤ u <
// NumGroups·UsersPerGroup) belongs to group u / UsersPerGroup; request i goes
// to user i mod (NumGroups·UsersPerGroup). Its prompt is the group's system
// prompt (one segment shared by the group) followed by the user's question
// (a segment of that user's own): as in inference-perf, whose generator
// draws one prompt per user up front and cycles requests over them, a
// returning user sends the same prompt again, so after the first round every
// prompt is a prefix-cache hit on an instance that kept it. A zero-length
// part is omitted. Within a stage of
// duration D and n = round(rate·D) requests, arrival times are the sorted
// positions of n uniform points in the stage, which is a Poisson process
// conditioned on n arrivals (equivalently, n+1 exponential gaps rescaled to
// sum to D); they are drawn in order, one uniform each, without storing the
// stage. Stage k starts where stage k−1 ends. It returns s.Validate()'s
// error, if any. Cost per request: O(1), one allocation (the Prefix).
func NewSharedPrefix(s SharedPrefix, rng *rand.Rand) (sim.Source, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	g := &sharedPrefix{spec: s, rng: rng, stage: -1}
	g.nextStage()
	return g, nil
}

type sharedPrefix struct {
	spec         SharedPrefix
	rng          *rand.Rand
	stage        int     // current stage; len(spec.Stages) when done
	stageStartNs int64   // start of the current stage
	stageLeft    int64   // requests still to send in the current stage
	pos          float64 // last arrival's position in the stage, in [0, 1]
	nextID       int64
}

// nextStage moves to the next stage that sends at least one request.
func (g *sharedPrefix) nextStage() {
	for g.stageLeft == 0 && g.stage < len(g.spec.Stages) {
		if g.stage >= 0 {
			g.stageStartNs += int64(g.spec.Stages[g.stage].Duration)
		}
		g.stage++
		if g.stage < len(g.spec.Stages) {
			g.stageLeft = int64(g.spec.Stages[g.stage].count())
			g.pos = 0
		}
	}
}

// Next implements sim.Source.
func (g *sharedPrefix) Next(r *sim.Request) (bool, error) {
	if g.stageLeft == 0 {
		return false, nil
	}
	// The smallest of m uniforms on (pos, 1) is pos + (1−pos)(1 − V^{1/m})
	// for V uniform on [0, 1): the next order statistic given the last.
	m := float64(g.stageLeft)
	g.pos += (1 - g.pos) * -math.Expm1(math.Log(g.rng.Float64())/m)
	durNs := float64(g.spec.Stages[g.stage].Duration)
	*r = sim.Request{
		ID:           g.nextID,
		ArrivalNs:    g.stageStartNs + int64(math.Round(min(g.pos, 1)*durNs)),
		PromptTokens: g.spec.SystemPromptLen + g.spec.QuestionLen,
		OutputTokens: g.spec.OutputLen,
		Prefix:       g.prefix(),
	}
	g.nextID++
	g.stageLeft--
	g.nextStage()
	return true, nil
}

// prefix builds the current request's segments.
func (g *sharedPrefix) prefix() []kv.Segment {
	s := g.spec
	user := g.nextID % int64(s.NumGroups*s.UsersPerGroup)
	group := uint64(user / int64(s.UsersPerGroup))
	p := make([]kv.Segment, 0, 2)
	if s.SystemPromptLen > 0 {
		p = append(p, kv.Segment{ID: segSystemPrompt | group, Tokens: s.SystemPromptLen})
	}
	if s.QuestionLen > 0 {
		p = append(p, kv.Segment{ID: segQuestion | uint64(user), Tokens: s.QuestionLen})
	}
	return p
}
