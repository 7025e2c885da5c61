package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"handoff/models/units"
	"handoff/scenarios/workload"
)

// validate checks every field that decoding cannot; errors name the field
// and its line.
func (l *Loaded) validate() error {
	s := &l.Scenario
	switch {
	case s.Name == "":
		return l.errorf("name", "required")
	case s.Model == "":
		return l.errorf("model", "required: a served-model name (handoff catalog models) or a Hugging Face config.json")
	case s.SLO.TTFT <= 0 || s.SLO.TPOT <= 0:
		return l.errorf("slo", "ttft and tpot are required and must be positive (e.g. {ttft: 500ms, tpot: 50ms})")
	case !inUnit(s.SLO.Attainment):
		return l.errorf("slo.attainment", "must be in (0, 1], got %g", s.SLO.Attainment)
	case !(s.Workload.RateScale >= minRateScale && s.Workload.RateScale <= maxRateScale):
		return l.errorf("workload.rate_scale", "must be in [%g, %g], got %g", minRateScale, maxRateScale, s.Workload.RateScale)
	case len(s.Pools) == 0:
		return l.errorf("pools", "at least one pool is required")
	}
	if g := l.Gateway.Latency; g < 0 || g > maxTimeout {
		return l.errorf("gateway.latency", "must be in [0, 1 year], got %v", g)
	}
	if g := l.Gateway.Hop; g < 0 || g > maxTimeout {
		return l.errorf("gateway.hop", "must be in [0, 1 year], got %v", g)
	}
	if err := l.validateClient(); err != nil {
		return err
	}
	if err := l.validateWorkload(); err != nil {
		return err
	}
	if err := l.validateClasses(); err != nil {
		return err
	}
	if err := l.validatePools(); err != nil {
		return err
	}
	if err := l.validateFleet(); err != nil {
		return err
	}
	if err := l.validateStore(); err != nil {
		return err
	}
	if err := l.validateTopology(); err != nil {
		return err
	}
	if _, ok := policy(s.Router.Policy); !ok {
		return l.errorf("router.policy", "unknown policy %q (known: %s)", s.Router.Policy, strings.Join(policyNames(), ", "))
	}
	return l.validateRouter()
}

// inUnit reports whether x is in (0, 1]; NaN is not.
func inUnit(x float64) bool { return x > 0 && x <= 1 }

// Limits that keep a typo from exhausting memory or time. Each instance
// costs under 10 kB and tens of microseconds before any request (its
// engine, links and view; sim's BenchmarkStartup), linear in the count, so
// maxInstances keeps a run's start-up near 100 MB; its KV state then grows
// with the blocks its requests use.
const (
	maxInstances   = 16384 // instances over all pools (validateInstanceLimit)
	maxTP          = 1024  // tensor-parallel degree of one instance
	minRateScale   = 1e-6  // beyond these, scaled arrival times overflow or collapse
	maxRateScale   = 1e6
	maxTimeout     = units.Duration(365 * 24 * 3600 * 1e9) // a client timeout beyond a year is a typo
	maxConcurrency = 1 << 20                               // closed-loop users: all send at t = 0
)

// validateClient checks the client's timeouts (not negative, at most a
// year) and its closed loop: concurrency, think time and requests not
// negative, at least as many requests as users, no rate scale.
func (l *Loaded) validateClient() error {
	c := l.Scenario.Workload.Client
	for _, d := range []struct {
		v     units.Duration
		field string
	}{{c.Timeout, "timeout"}, {c.FirstTokenTimeout, "first_token_timeout"}, {c.ThinkTime, "think_time"}} {
		if d.v < 0 || d.v > maxTimeout {
			return l.errorf("workload.client."+d.field, "must be in [0, 1 year] (0: none), got %v", d.v)
		}
	}
	switch {
	case c.Concurrency < 0 || c.Concurrency > maxConcurrency:
		return l.errorf("workload.client.concurrency", "must be in [0, %d] (0: open loop), got %d", maxConcurrency, c.Concurrency)
	case c.Requests < 0:
		return l.errorf("workload.client.requests", "must not be negative (0: until the source is exhausted), got %d", c.Requests)
	case c.Concurrency == 0 && (c.ThinkTime != 0 || c.Requests != 0):
		return l.errorf("workload.client.concurrency", "think_time and requests need a closed loop: set concurrency > 0")
	case c.Requests > 0 && c.Requests < int64(c.Concurrency):
		return l.errorf("workload.client.requests", "must be at least concurrency (%d), got %d", c.Concurrency, c.Requests)
	}
	return nil
}

// RateFixedBy names the field whose workload workload.rate_scale cannot
// speed up or slow down, and says why in a clause; "" when it can. Two
// kinds of workload set their own arrival rate: a closed loop, whose users
// send when their last request ends, and sessions, whose turns follow the
// answers to the turns before.
func (l *Loaded) RateFixedBy() (field, why string) {
	w := &l.Workload
	switch {
	case w.Client.Concurrency > 0:
		return "workload.client.concurrency", fmt.Sprintf("a closed loop of %d users sends a request only when one "+
			"of theirs has ended, so its arrival rate is an outcome of the fleet, not an input", w.Client.Concurrency)
	case w.Sessions != nil:
		return "workload.sessions", "a session sends each turn a think time after the answer to the one before, so " +
			"the turns' arrival rate is an outcome of the fleet; the sessions start at workload.sessions.arrival.rate"
	case w.Trace != nil && w.Trace.Format == workload.FormatSessions:
		return "workload.trace.format", "a session sends each turn a think time after the answer to the one before, so " +
			"the turns' arrival rate is an outcome of the fleet; the sessions start at the trace's timestamps"
	}
	return "", ""
}

// FieldError returns an error at the scenario's field path, as the
// loader's are: at the field's line in the file, or naming the --set that
// wrote it.
func (l *Loaded) FieldError(path, msg string) error { return l.errorf(path, "%s", msg) }

func (l *Loaded) validateWorkload() error {
	w := &l.Workload
	n := 0
	for _, set := range []bool{w.Synthetic != nil, w.SharedPrefix != nil, w.Trace != nil, w.ServeGen != nil, w.Sessions != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return l.errorf("workload", "give exactly one of synthetic, shared_prefix, trace, servegen or sessions (got %d)", n)
	}
	if err := l.validateSessions(); err != nil {
		return err
	}
	// 1 is accepted: a saved effective scenario writes it.
	if field, why := l.RateFixedBy(); field != "" && w.RateScale != defaultRateScale {
		return l.errorf("workload.rate_scale", "cannot be set with %s: %s", field, why)
	}
	switch {
	case w.Sessions != nil:
		return l.locate("workload.sessions", w.Sessions.Validate())
	case w.Synthetic != nil:
		return l.locate("workload.synthetic", w.Synthetic.Validate())
	case w.SharedPrefix != nil:
		return l.locate("workload.shared_prefix", w.SharedPrefix.Validate())
	case w.ServeGen != nil:
		return l.locate("workload.servegen", w.ServeGen.Validate())
	}
	return l.locate("workload.trace", w.Trace.Validate())
}

// validateSessions refuses what a session workload cannot do: it paces
// its own turns, so no closed loop.
func (l *Loaded) validateSessions() error {
	w := &l.Workload
	sessions := w.Sessions != nil || w.Trace != nil && w.Trace.Format == workload.FormatSessions
	if sessions && w.Client.Concurrency > 0 {
		return l.errorf("workload.client.concurrency", "must be 0 with sessions: a session sends its next turn think_ms after the previous one ends")
	}
	return nil
}

var (
	roles       = []string{"colocated", "prefill", "decode"}
	preemptions = []string{"recompute", "swap", "reject"}
	// remoteKVQueues: where requests waiting for, or holding, remote KV
	// wait (engine.Config.SharedQueue).
	remoteKVQueues = []string{"separate", "shared"}
	// dpRoutings: who picks a data-parallel rank, vLLM's balancer or the
	// router.
	dpRoutings = []string{"balancer", "router"}
	// claims: what a pool's owner may answer for besides its pool.
	claims = []string{"transfer", "router"}
)

func (l *Loaded) validatePools() error {
	names := map[string]bool{}
	for i := range l.Pools {
		p := &l.Pools[i]
		at := fmt.Sprintf("pools[%d]", i)
		if err := l.validatePool(at, p); err != nil {
			return err
		}
		if names[p.Name] {
			return l.errorf(at+".name", "duplicate pool name %q", p.Name)
		}
		names[p.Name] = true
	}
	return l.validateRoles()
}

// validateRoles requires colocated pools only, or both prefill and decode
// pools. A pool that breaks the pattern set by the first pool is named.
func (l *Loaded) validateRoles() error {
	colocated := l.Pools[0].Role == "colocated"
	has := map[string]int{}
	for i, p := range l.Pools {
		if (p.Role == "colocated") != colocated {
			return l.errorf(fmt.Sprintf("pools[%d].role", i), "%s pools cannot be mixed with %s pools (pools[0])",
				p.Role, l.Pools[0].Role)
		}
		if _, ok := has[p.Role]; !ok {
			has[p.Role] = i
		}
	}
	if i, ok := has["prefill"]; ok && len(has) == 1 {
		return l.errorf(fmt.Sprintf("pools[%d].role", i), "a prefill pool needs a decode pool to hand requests to")
	}
	if i, ok := has["decode"]; ok && len(has) == 1 {
		return l.errorf(fmt.Sprintf("pools[%d].role", i), "a decode pool needs a prefill pool to send it requests")
	}
	return nil
}

func (l *Loaded) validatePool(at string, p *Pool) error {
	st := p.StepTime
	if p.Wafer != nil {
		if err := l.validateWafer(at, p); err != nil {
			return err
		}
	}
	if err := l.validateTiers(at, p); err != nil {
		return err
	}
	switch {
	case p.Name == "":
		return l.errorf(at+".name", "required")
	case !slices.Contains(roles, p.Role):
		return l.errorf(at+".role", "unknown role %q (known: %s)", p.Role, strings.Join(roles, ", "))
	case p.Count < 1 || p.Count > maxInstances:
		return l.errorf(at+".count", "must be in [1, %d], got %d", maxInstances, p.Count)
	case p.Hardware == "":
		return l.errorf(at+".hardware", "required: an accelerator name (handoff catalog hardware)")
	case p.TP < 1 || p.TP > maxTP:
		return l.errorf(at+".tp", "must be in [1, %d], got %d", maxTP, p.TP)
	case p.DP < 1 || p.DP > maxTP:
		return l.errorf(at+".dp", "must be in [1, %d], got %d", maxTP, p.DP)
	case p.EP < 1 || p.EP > maxTP*maxTP:
		return l.errorf(at+".ep", "must be in [1, %d], got %d", maxTP*maxTP, p.EP)
	case p.PP < 1 || p.PP > maxPP:
		return l.errorf(at+".pp", "must be in [1, %d], got %d", maxPP, p.PP)
	case p.Wafer != nil && p.PP != 1:
		return l.errorf(at+".pp", "a wafer pool pipelines its wafers: set wafer.wafers, not pp")
	case p.PP > 1 && st.Model != defaultStepTime:
		return l.errorf(at+".step_time.model", "pp %d prices each stage over its share of the layers, which only the "+
			"%s model does (a measured %s profile is of the whole model)", p.PP, defaultStepTime, st.Model)
	case !slices.Contains(dpRoutings, p.DPRouting):
		return l.errorf(at+".dp_routing", "unknown %q (known: %s)", p.DPRouting, strings.Join(dpRoutings, ", "))
	case p.Wafer != nil && (p.DP != 1 || p.EP != 1):
		return l.errorf(at+".dp", "a wafer pool is sized by wafer.wafers, not dp or ep")
	case p.PP > 1 && p.Preemption == "swap":
		return l.errorf(at+".preemption", "swap with pp > 1 is not modelled (every stage would copy its layers' blocks): use recompute")
	case p.DP > 1 && p.Preemption == "swap":
		return l.errorf(at+".preemption", "swap with dp > 1 is not modelled (its copies would stall the whole group)")
	case p.Wafer == nil && !slices.Contains(preemptions, p.Preemption):
		return l.errorf(at+".preemption", "unknown policy %q (known: %s)", p.Preemption, strings.Join(preemptions, ", "))
	case p.Wafer == nil && st.Model == defaultWaferStepTime:
		return l.errorf(at+".step_time.model", "the wafer model goes with a wafer block on wafer hardware")
	case p.Swap != nil && len(p.KVTiers) > 0 && p.KVTiers[0].Tier == "host":
		return l.errorf(at+".swap", "swap space and a host KV tier are one capacity: swap uses the host tier, drop swap")
	case (p.Swap != nil) != (p.Preemption == "swap") && !(len(p.KVTiers) > 0 && p.KVTiers[0].Tier == "host"):
		return l.errorf(at+".swap", "swap settings go with preemption: swap, and preemption: swap needs them "+
			"(e.g. swap: {host_memory: 256GB})")
	case (p.Reject != nil) != (p.Preemption == "reject"):
		return l.errorf(at+".reject", "reject settings go with preemption: reject, and preemption: reject needs them "+
			"(e.g. reject: {cache_hit_threshold: 0.8, phase: 2})")
	case stepTimeSpec(&st) == nil:
		return l.errorf(at+".step_time.model", "unknown model %q (known: %s)", st.Model, strings.Join(stepTimeNames(), ", "))
	}
	if err := stepTimeSpec(&st).Check(); err != nil {
		return l.locate(at+".step_time", err)
	}
	for _, check := range []func(string, *Pool) error{l.validatePolicy, l.validateSpeculative, l.validateContextRange} {
		if err := check(at, p); err != nil {
			return err
		}
	}
	if err := l.validateEngine(at+".engine", &p.Engine); err != nil {
		return err
	}
	return l.validateRelease(at+".engine", p)
}

func (l *Loaded) validateEngine(at string, e *Engine) error {
	switch {
	case e.MaxNumBatchedTokens < 1:
		return l.errorf(at+".max_num_batched_tokens", "must be positive, got %d", e.MaxNumBatchedTokens)
	case e.MaxNumSeqs < 1:
		return l.errorf(at+".max_num_seqs", "must be positive, got %d", e.MaxNumSeqs)
	case e.BlockSize < 1:
		return l.errorf(at+".block_size", "must be positive, got %d", e.BlockSize)
	case !inUnit(e.MemoryUtilization):
		return l.errorf(at+".memory_utilization", "must be in (0, 1], got %g", e.MemoryUtilization)
	case e.MaxModelLen < 0:
		return l.errorf(at+".max_model_len", "must not be negative, got %d", e.MaxModelLen)
	case !slices.Contains(remoteKVQueues, e.RemoteKVQueue):
		return l.errorf(at+".remote_kv_queue", "unknown order %q (known: %s)", e.RemoteKVQueue, strings.Join(remoteKVQueues, ", "))
	}
	return nil
}

// validatePolicy checks a pool's swap, reject and claims settings.
func (l *Loaded) validatePolicy(at string, p *Pool) error {
	if sw := p.Swap; sw != nil && (sw.HostMemory < 0 || sw.HostBandwidth < 0) {
		return l.errorf(at+".swap.host_memory", "host tier size and bandwidth must not be negative")
	}
	if r := p.Reject; r != nil {
		switch {
		case !(r.CacheHitThreshold >= 0 && r.CacheHitThreshold <= 1):
			return l.errorf(at+".reject.cache_hit_threshold", "must be in [0, 1], got %g", r.CacheHitThreshold)
		case r.Phase != 1 && r.Phase != 2:
			return l.errorf(at+".reject.phase", "must be 1 (re-run the request) or 2 (re-send it with its tokens), got %d", r.Phase)
		case p.Role != "decode":
			return l.errorf(at+".preemption", "reject hands requests back to the router and needs a decode pool, not %s", p.Role)
		}
	}
	if p.StreamKV && p.Role != "prefill" {
		return l.errorf(at+".stream_kv", "applies to prefill pools, not %s", p.Role)
	}
	if p.StreamKV && p.PP > 1 {
		return l.errorf(at+".stream_kv", "streaming KV layer by layer from a pipeline (pp %d), each stage its own layers, is not modelled: use pp 1", p.PP)
	}
	if err := l.validateHandoff(at, p); err != nil {
		return err
	}
	for k, c := range p.Claims {
		if !slices.Contains(claims, c) {
			return l.errorf(fmt.Sprintf("%s.claims[%d]", at, k), "unknown claim %q (known: %s)", c, strings.Join(claims, ", "))
		}
	}
	return nil
}
