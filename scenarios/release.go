package scenarios

import (
	"slices"
	"strconv"
	"strings"

	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/strictyaml"
)

// Engine releases. A pool's engine.vllm names the vLLM release whose
// scheduling rules its instances follow (engine.VLLM: each rule with the
// release that brought it); its rules fill the engine fields the file
// leaves out. The default, latest, is the newest release, and any rule may
// be set apart from it: a what-if. A numbered release is that release, so
// a rule it did not have, set in the file, is an error naming the release
// that brought it. Wafer pools run no vLLM: only remote_kv_queue applies
// to them. A pool of another engine kind takes its kind's rules instead
// (enginekind.go).

// releaseDefaults fills the engine fields of pool p (at "pools[i].engine.")
// that the file leaves out from its release's rules.
func (l *Loaded) releaseDefaults(at string, p *Pool) {
	e := &p.Engine
	if p.Wafer != nil { // only the queue order applies
		fill(l, at+"remote_kv_queue", &e.RemoteKVQueue, defaultRemoteKVQueue)
		e.AsyncScheduling = orDefaultPtr(e.AsyncScheduling, true)
		e.HybridKVWithConnector = orDefaultPtr(e.HybridKVWithConnector, true) // no vLLM: its KV layout is its own
		return
	}
	fill(l, at+"kind", &e.Kind, engine.KindVLLM.String())
	if e.Kind != engine.KindVLLM.String() {
		l.kindDefaults(at, p)
		return
	}
	fill(l, at+"vllm", &e.VLLM, engine.Latest)
	r, err := engine.VLLM(e.VLLM)
	if err != nil {
		r, _ = engine.VLLM(engine.Latest) // validation reports the name
	}
	fill(l, at+"admission", &e.Admission, r.Rules.Admission.String())
	fill(l, at+"remote_kv_queue", &e.RemoteKVQueue, map[bool]string{true: "shared", false: "separate"}[r.Rules.SharedQueue])
	e.AsyncScheduling = orDefaultPtr(e.AsyncScheduling, r.AsyncScheduling)
	e.ReserveInflight = orDefaultPtr(e.ReserveInflight, r.Rules.ReserveInflight)
	e.DeferredFree = orDefaultPtr(e.DeferredFree, r.Rules.DeferFrees)
	fill(l, at+"fenced_victim", &e.FencedVictim, r.Rules.FencedVictim.String())
	e.Watermark = orDefaultPtr(e.Watermark, 0.0)
	e.HybridKVWithConnector = orDefaultPtr(e.HybridKVWithConnector, r.HybridKV)
}

// The rules' known values, which validation and the swarm read.
var (
	vllmAdmissionRules = []string{engine.FirstChunk.String(), engine.FullSequence.String()}
	admissionRules     = append(slices.Clone(vllmAdmissionRules), engine.NewTokenRatio.String(), engine.ReserveOutput.String())
	fencedVictimRules  = []string{engine.Cascade.String(), engine.Wait.String()}
)

// release is the preset of the pool's vLLM release: latest for a wafer
// pool, or a release validation will refuse.
func (p *Pool) release() engine.Release {
	if p.Wafer == nil && p.Engine.Kind != engine.KindVLLM.String() {
		return kindRelease(&p.Engine)
	}
	if r, err := engine.VLLM(p.Engine.VLLM); err == nil {
		return r
	}
	r, _ := engine.VLLM(engine.Latest)
	return r
}

// orDefaultPtr is v, or a pointer to def when v is nil.
func orDefaultPtr[T any](v *T, def T) *T {
	if v != nil {
		return v
	}
	return &def
}

// validateRelease checks a pool's release and rule values (at
// "pools[i].engine"): a release handoff knows, rule values it knows, and,
// for a numbered release, rules set in the file that the release had.
func (l *Loaded) validateRelease(at string, p *Pool) error {
	e, pool := &p.Engine, strings.TrimSuffix(at, ".engine")
	if e.SchedulingPolicy != "" && !slices.Contains(engine.SchedulingPolicies(), e.SchedulingPolicy) {
		return l.errorf(at+".scheduling_policy", "unknown policy %q (known: %s)", e.SchedulingPolicy,
			strings.Join(engine.SchedulingPolicies(), ", "))
	}
	if done, err := l.validateKind(at, p); done || err != nil {
		return err
	}
	if e.VLLM == "" { // a wafer pool
		if e.SchedulingPolicy != "" && e.SchedulingPolicy != "fcfs" {
			return l.errorf(at+".scheduling_policy", "a wafer pool's slots admit in arrival order: fcfs only")
		}
		if l.given(at + ".vllm") {
			return l.errorf(at+".vllm", "a wafer pool runs its vendor's compiled runtime, not vLLM")
		}
		return nil
	}
	if _, err := engine.VLLM(e.VLLM); err != nil {
		return l.errorf(at+".vllm", "%v", err)
	}
	switch {
	case !slices.Contains(vllmAdmissionRules, e.Admission):
		return l.errorf(at+".admission", "unknown rule %q for vLLM (known: %s)", e.Admission, strings.Join(vllmAdmissionRules, ", "))
	case !slices.Contains(fencedVictimRules, e.FencedVictim):
		return l.errorf(at+".fenced_victim", "unknown rule %q (known: %s)", e.FencedVictim, strings.Join(fencedVictimRules, ", "))
	case !(*e.Watermark >= 0 && *e.Watermark < 1):
		return l.errorf(at+".watermark", "must be in [0, 1), got %g", *e.Watermark)
	}
	if e.VLLM == engine.Latest || !l.given(at+".vllm") {
		return nil // latest, the default, takes any rule: a what-if
	}
	for _, rule := range engine.VLLMRules() {
		path, ok := l.givenRule(pool, rule.Field, p)
		if !ok {
			continue
		}
		if err := rule.Check(e.VLLM, ruleValue(rule.Field, p)); err != nil {
			return l.errorf(path, "%v", err)
		}
	}
	return nil
}

// givenRule reports whether the scenario sets the release rule field of
// the pool at path pool, and at which path: kv_hold by its mode, or by
// the older kv_hold_timeout, which is a timeout.
func (l *Loaded) givenRule(pool, field string, p *Pool) (string, bool) {
	path := pool + "." + field
	switch {
	case field != "kv_hold":
		return path, l.given(path)
	case l.given(pool + "." + kvHoldTimeoutKey):
		return pool + "." + kvHoldTimeoutKey, true
	}
	return path + ".mode", l.given(path + ".mode")
}

// given reports whether the scenario (file and --set flags) sets the
// field at path.
func (l *Loaded) given(path string) bool {
	n := strictyaml.Find(l.root, path)
	return n != nil && n.Tag != "!!null"
}

// ruleValue is the value of a release rule's field as engine.VLLMRules
// names it.
func ruleValue(field string, p *Pool) string {
	e := &p.Engine
	switch field {
	case "kv_hold":
		if p.KVHold == nil {
			return "timeout" // the older kv_hold_timeout
		}
		return p.KVHold.Mode
	case "notify_rejected":
		return strconv.FormatBool(*p.NotifyRejected)
	case "kv_load_failure_policy":
		return p.KVLoadFailurePolicy
	case "engine.admission":
		return e.Admission
	case "engine.remote_kv_queue":
		return e.RemoteKVQueue
	case "engine.async_scheduling":
		return strconv.FormatBool(*e.AsyncScheduling)
	case "engine.reserve_inflight":
		return strconv.FormatBool(*e.ReserveInflight)
	case "engine.deferred_free":
		return strconv.FormatBool(*e.DeferredFree)
	case "engine.fenced_victim":
		return e.FencedVictim
	case "engine.hybrid_kv_with_connector":
		return strconv.FormatBool(*e.HybridKVWithConnector)
	case "engine.watermark":
		if *e.Watermark == 0 {
			return "0"
		}
		return "any"
	}
	panic("scenarios: no release rule " + field)
}

// kvModel is the model as pool p's KV cache holds it: with a KV connector
// (a prefill or decode pool on vLLM) and the hybrid KV cache manager off
// (engine.hybrid_kv_with_connector), every layer keeps full KV
// (llm.Model.UnifiedKV); otherwise m.
func kvModel(p *Pool, m *llm.Model) *llm.Model {
	m = draftKV(p, m)
	if p.Wafer != nil || p.Role != "prefill" && p.Role != "decode" || *p.Engine.HybridKVWithConnector {
		return m
	}
	return m.UnifiedKV()
}

// checkKVLayouts checks that the prefill and decode pools of a model with
// sliding-window layers keep their KV alike: vLLM's NIXL connector moves
// blocks as they are, so a prefiller whose every block holds every layer
// cannot hand off to a decoder whose blocks hold one KV cache group's.
// Wafer pools lay KV out their own way (their staging) and are left out.
func (l *Loaded) checkKVLayouts(m *llm.Model) error {
	if m.SlidingLayers == 0 {
		return nil
	}
	firstAt := ""
	var first bool
	for i := range l.Pools {
		p := &l.Pools[i]
		if p.Wafer != nil || p.Role != "prefill" && p.Role != "decode" {
			continue
		}
		on, at := *p.Engine.HybridKVWithConnector, "pools["+strconv.Itoa(i)+"].engine.hybrid_kv_with_connector"
		if firstAt == "" {
			first, firstAt = on, at
		} else if on != first {
			return l.errorf(at, "%v beside %v at %s: the prefill and decode pools of %s (sliding-window layers) must "+
				"lay out their KV alike, as NIXL moves blocks as they are", on, first, firstAt, m.Name)
		}
	}
	return nil
}

// engineRules is the engine.Rules a pool's engine fields describe.
func engineRules(e *Engine) engine.Rules {
	r := engine.Rules{SharedQueue: e.RemoteKVQueue == "shared", ReserveInflight: *e.ReserveInflight,
		DeferFrees: *e.DeferredFree}
	if e.Kind != engine.KindVLLM.String() && e.Kind != "" {
		r = kindRelease(e).Rules
	}
	if i := slices.Index(admissionRules, e.Admission); i >= 0 {
		r.Admission = engine.Admission(i)
	}
	if e.FencedVictim == "wait" {
		r.FencedVictim = engine.Wait
	}
	return r
}
