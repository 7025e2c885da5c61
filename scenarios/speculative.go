package scenarios

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/models/draft"
	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/perf"
)

// Speculative is a pool's speculative decoding (docs/SPECULATIVE.md):
// speculative: {method: mtp, num_tokens: 2, acceptance: deepseek-v3-mtp}.
type Speculative struct {
	Method     string     `yaml:"method"`                // a drafter kind (drafters)
	NumTokens  int        `yaml:"num_tokens"`            // draft tokens per sequence per step, k; 0: off
	Acceptance Acceptance `yaml:"acceptance"`            // per-position conditional rates, or a published set's name
	DraftModel string     `yaml:"draft_model,omitempty"` // method draft_model: the catalog model drafting
}

// Acceptance is either the rates themselves, [a1, a2, …] — the i-th draft
// token's acceptance given the earlier ones were accepted — or the name
// of a published set (acceptanceSets).
type Acceptance struct {
	Rates []float64
	Set   string
}

// UnmarshalYAML takes a list of rates or a set's name.
func (a *Acceptance) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.Set = n.Value
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a list of rates or a set's name", n.Line)}}
	}
	return n.Decode(&a.Rates)
}

// MarshalYAML writes the set's name, or the rates.
func (a Acceptance) MarshalYAML() (any, error) {
	if a.Set != "" {
		return a.Set, nil
	}
	return a.Rates, nil
}

// drafters are the drafting methods a pool may run, one line each.
var drafters = []draft.Kind{
	draft.MTP{},
	draft.EAGLE{},
	draft.EAGLE3{},
	draft.Ngram{},
	draft.Model{},
}

// drafterOf returns the drafter kind named name, nil if none.
func drafterOf(name string) draft.Kind {
	for _, d := range drafters {
		if d.Name() == name {
			return d
		}
	}
	return nil
}

func drafterNames() []string {
	names := make([]string, len(drafters))
	for i, d := range drafters {
		names[i] = d.Name()
	}
	return names
}

// on reports whether the pool drafts.
func (s *Speculative) on() bool { return s != nil && s.NumTokens > 0 }

// rates are the acceptance rates of the first num_tokens positions.
func (s *Speculative) rates() []float64 {
	r := s.Acceptance.Rates
	if set, ok := acceptanceSets[s.Acceptance.Set]; ok {
		r = set.rates
	}
	return r[:s.NumTokens]
}

// validateSpeculative checks a pool's speculative block on its own (the
// model's limits are checked when the pool is built).
func (l *Loaded) validateSpeculative(at string, p *Pool) error {
	s := p.Speculative
	if s == nil {
		return nil
	}
	at += ".speculative"
	kind := drafterOf(s.Method)
	switch {
	case kind == nil:
		return l.errorf(at+".method", "unknown method %q (known: %s)", s.Method, strings.Join(drafterNames(), ", "))
	case s.NumTokens < 0:
		return l.errorf(at+".num_tokens", "must not be negative, got %d", s.NumTokens)
	case p.Wafer != nil && s.on():
		return l.errorf(at, "a wafer's compiled slots verify one token per step: speculative decoding needs a GPU pool's paged KV")
	case p.PP > 1 && s.on():
		return l.errorf(at, "speculative decoding with pipeline parallelism (pp %d) is not modelled: use pp 1", p.PP)
	case kind.UsesModel() != (s.DraftModel != ""):
		if kind.UsesModel() {
			return l.errorf(at+".draft_model", "required with method %s: a catalog model to draft with", s.Method)
		}
		return l.errorf(at+".draft_model", "goes with method draft_model, not %s", s.Method)
	case !s.on():
		return nil
	}
	return l.validateAcceptance(at+".acceptance", s, kind)
}

// validateAcceptance checks the rates a pool's speculative block gives or
// names.
func (l *Loaded) validateAcceptance(at string, s *Speculative, kind draft.Kind) error {
	rates := s.Acceptance.Rates
	if name := s.Acceptance.Set; name != "" {
		set, ok := acceptanceSets[name]
		switch {
		case !ok:
			return l.errorf(at, "unknown set %q (known: %s)", name, strings.Join(acceptanceSetNames(), ", "))
		case set.method != s.Method:
			return l.errorf(at, "set %s was measured with method %s, not %s", name, set.method, s.Method)
		case len(set.rates) < s.NumTokens:
			return l.errorf(at, "set %s has rates for %d positions, num_tokens is %d", name, len(set.rates), s.NumTokens)
		}
		return nil
	}
	if len(rates) < s.NumTokens {
		return l.errorf(at, "needs a rate for each of the %d draft positions (or a set's name: %s), got %d",
			s.NumTokens, strings.Join(acceptanceSetNames(), ", "), len(rates))
	}
	for i, a := range rates {
		if !(a >= 0 && a <= 1) {
			return l.errorf(fmt.Sprintf("%s[%d]", at, i), "must be in [0, 1], got %g", a)
		}
		// A model drafter's later drafts build on its own earlier guesses:
		// each published per-position rate falls with the position.
		if i > 0 && kind.Lookahead() && a > rates[i-1] {
			return l.errorf(fmt.Sprintf("%s[%d]", at, i), "%g exceeds the rate before it (%g): method %s drafts with a model, whose acceptance "+
				"does not rise with the position", a, rates[i-1], s.Method)
		}
	}
	return nil
}

// checkSpeculativePairs checks that every prefill pool runs the model
// drafter of the decode pools that draft: vLLM's NIXL handshake refuses a
// prefiller and decoder whose model-based speculative settings differ
// (PR #49230), as the drafter's KV for the prompt comes with the target's.
func (l *Loaded) checkSpeculativePairs() error {
	for i := range l.Pools {
		d := &l.Pools[i]
		if d.Role != "decode" || !d.Speculative.on() || !drafterOf(d.Speculative.Method).Lookahead() {
			continue
		}
		for j := range l.Pools {
			p := &l.Pools[j]
			if p.Role == "prefill" && (!p.Speculative.on() || p.Speculative.Method != d.Speculative.Method) {
				return l.errorf(fmt.Sprintf("pools[%d].speculative", j), "decode pool %s drafts with %s: its prefillers must "+
					"run the same drafter (vLLM's NIXL handshake checks it), so that the drafter's KV for the prompt is made here "+
					"and crosses with the target's", d.Name, d.Speculative.Method)
			}
		}
	}
	return nil
}

// speculativeNet checks a drafting pool's method, k and draft model
// against the served model m, and returns the method and the network its
// draft passes run (nil: none on the GPU).
func (l *Loaded) speculativeNet(at string, p *Pool, m *llm.Model) (draft.Kind, *llm.Model, error) {
	s := p.Speculative
	at += ".speculative"
	kind := drafterOf(s.Method)
	if err := kind.Check(m); err != nil {
		return nil, nil, l.errorf(at+".method", "%v", err)
	}
	if most := kind.MaxTokens(m); s.NumTokens > most {
		return nil, nil, l.errorf(at+".num_tokens", "method %s verifies at most %d draft tokens per step (vLLM's rejection sampler), got %d",
			s.Method, most, s.NumTokens)
	}
	var dm *llm.Model
	if kind.UsesModel() {
		_, models, err := l.catalogs()
		if err != nil {
			return nil, nil, err
		}
		if dm, err = models.Model(s.DraftModel); err != nil {
			return nil, nil, l.errorf(at+".draft_model", "%s", strings.TrimPrefix(err.Error(), "llm: "))
		}
		if err := draft.CheckPair(m, dm); err != nil {
			return nil, nil, l.errorf(at+".draft_model", "%v", err)
		}
	}
	return kind, kind.Network(m, dm), nil
}

// applySpeculative sets a drafting pool's speculative decoding on its
// engine configuration.
func (l *Loaded) applySpeculative(at string, p *Pool, m *llm.Model, cfg *engine.Config) error {
	if !p.Speculative.on() {
		return nil
	}
	kind, _, err := l.speculativeNet(at, p, m)
	if err != nil {
		return err
	}
	cfg.Spec = engine.Speculative{Tokens: p.Speculative.NumTokens, Lookahead: kind.Lookahead(),
		Accept: p.Speculative.rates(), Seed: l.Seed}
	if err := cfg.Validate(); err != nil {
		return l.errorf(at+".speculative", "%v", err)
	}
	return nil
}

// drafted adds a drafting pool's drafter passes to its step timer t.
func (l *Loaded) drafted(at string, p *Pool, env perf.Env, t perf.StepTimer) (perf.StepTimer, error) {
	if !p.Speculative.on() || t == nil {
		return t, nil
	}
	_, net, err := l.speculativeNet(at, p, env.Model)
	if err != nil || net == nil {
		return t, err
	}
	d, err := perf.NewDrafter(env, net, p.Speculative.NumTokens)
	if err != nil {
		return nil, l.errorf(at+".speculative", "the drafter's network: %v", err)
	}
	return perf.WithDrafter(t, d), nil
}

// draftKV is the model a drafting pool's KV blocks and weights hold: m
// with the drafter's layer beside its own, for MTP and EAGLE heads, whose
// attention has the target's shape and whose KV vLLM allocates in the
// same blocks (and its NIXL connector transfers with the target's).
// A separate draft model's KV and weights are left out (docs/SPECULATIVE.md).
func draftKV(p *Pool, m *llm.Model) *llm.Model {
	if !p.Speculative.on() {
		return m
	}
	kind := drafterOf(p.Speculative.Method)
	net := kind.Network(m, nil)
	if net == nil || kind.UsesModel() {
		return m
	}
	km := *m
	km.Layers += net.Layers
	km.ParamsTotal += net.ParamsTotal
	km.ParamsActive += net.ParamsActive
	return &km
}
