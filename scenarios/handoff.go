package scenarios

import (
	"slices"
	"strings"

	"handoff/models/strictyaml"
	"handoff/models/units"
	"handoff/sim"
)

// The prefill/decode handoff's contract, per pool: how a prefill pool holds
// a finished prompt's KV for its decoder (kv_hold, notify_rejected), what a
// decode pool does when the KV it pulls is lost (kv_load_failure_policy),
// and llm-d's decode-first flow (decode_first). The core's sim/hold.go,
// strand.go, loadfail.go and decodefirst.go say what each does and where
// vLLM and llm-d do it.

// KVHold is how a prefill pool frees KV no decoder pulled: after a fixed
// timeout (vLLM up to 0.21: VLLM_NIXL_ABORT_REQUEST_TIMEOUT, 480 s since
// vLLM 0.11, 120 s before), or at the end of a lease its decoder renews
// while it holds the request (vLLM 0.22 on: kv_lease_duration, 30 s).
type KVHold struct {
	Mode    string          `yaml:"mode"`              // timeout | lease
	Timeout *units.Duration `yaml:"timeout,omitempty"` // mode timeout: freed this long after the prefill, pulled or not; 0 = never
	Lease   *units.Duration `yaml:"lease,omitempty"`   // mode lease: the lease, in whole seconds
}

// DecodeFirst is llm-d's decode-first flow on a decode pool: requests sent
// to it for a remote prefill carry cache_hit_threshold and come to it
// first.
type DecodeFirst struct {
	CacheHitThreshold float64 `yaml:"cache_hit_threshold"` // the least cached share of the prompt it serves a request whole at
}

// The handoff's defaults come from the pool's release (engine.vllm):
// these are vLLM's last NIXL timeout before the lease, for a timeout set
// apart from a release that has the lease, and its lease.
const (
	defaultKVHoldNs        = 480e9
	defaultKVLeaseNs       = 30e9
	kvHoldTimeoutKey       = "kv_hold_timeout"
	decodeFirstThresholdAt = ".decode_first.cache_hit_threshold"
)

var (
	holdModes    = []string{"timeout", "lease"}
	loadFailures = []string{"recompute", "fail"}
)

// handoffDefaults fills a pool's handoff fields: kv_hold (from the older
// kv_hold_timeout when the file gives that alone) and notify_rejected on a
// prefill pool that holds its KV for its decoders, kv_load_failure_policy
// on a decode pool. at ends with a dot.
func (l *Loaded) handoffDefaults(at string, p *Pool) {
	c := p.release().Connector
	switch {
	case p.Role == "decode":
		fill(l, at+"kv_load_failure_policy", &p.KVLoadFailurePolicy, c.LoadFailure.String())
		return
	case p.Role != "prefill" || p.KVHandoff == "store": // a store handoff frees the KV when the store has it
		return
	}
	if p.KVHoldTimeout != nil && p.KVHold == nil {
		p.KVHold, p.KVHoldTimeout = &KVHold{Mode: "timeout", Timeout: p.KVHoldTimeout}, nil
	}
	if p.KVHold == nil {
		p.KVHold = &KVHold{}
	}
	h := p.KVHold
	fill(l, at+"kv_hold.mode", &h.Mode, map[bool]string{true: "lease", false: "timeout"}[c.Lease])
	switch timeout := c.HoldTimeoutNs; {
	case h.Mode == "timeout" && h.Timeout == nil:
		if c.Lease { // a timeout set apart from a release with the lease: the last one before it
			timeout = defaultKVHoldNs
		}
		h.Timeout = ptr(units.Duration(timeout))
	case h.Mode == "lease" && h.Lease == nil:
		h.Lease = ptr(units.Duration(defaultKVLeaseNs))
	}
	if p.NotifyRejected == nil {
		p.NotifyRejected = ptr(c.NotifyRejected)
	}
}

// validateHandoff checks a pool's handoff fields against its role.
func (l *Loaded) validateHandoff(at string, p *Pool) error {
	switch {
	case p.KVHoldTimeout != nil && p.Role != "prefill":
		return l.errorf(at+"."+kvHoldTimeoutKey, "applies to prefill pools, not %s", p.Role)
	case p.KVHoldTimeout != nil && p.KVHandoff == "store":
		return l.errorf(at+"."+kvHoldTimeoutKey, "a pool handing off through the store frees its KV when the store has it: drop %s", kvHoldTimeoutKey)
	case p.KVHoldTimeout != nil:
		return l.errorf(at+"."+kvHoldTimeoutKey, "the older spelling of kv_hold: {mode: timeout, timeout: …}: give kv_hold alone")
	case p.KVHold != nil && p.Role != "prefill":
		return l.errorf(at+".kv_hold", "applies to prefill pools, not %s", p.Role)
	case p.KVHold != nil && p.KVHandoff == "store":
		return l.errorf(at+".kv_hold", "a pool handing off through the store frees its KV when the store has it: drop kv_hold")
	case p.NotifyRejected != nil && p.Role != "prefill":
		return l.errorf(at+".notify_rejected", "applies to prefill pools, not %s", p.Role)
	case p.KVLoadFailurePolicy != "" && p.Role != "decode":
		return l.errorf(at+".kv_load_failure_policy", "applies to decode pools, not %s", p.Role)
	case p.Role == "decode" && !slices.Contains(loadFailures, p.KVLoadFailurePolicy):
		return l.errorf(at+".kv_load_failure_policy", "unknown policy %q (known: %s)", p.KVLoadFailurePolicy,
			strings.Join(loadFailures, ", "))
	}
	if err := l.validateHold(at+".kv_hold", p.KVHold); err != nil {
		return err
	}
	return l.validateDecodeFirst(at, p)
}

// validateHold checks a prefill pool's kv_hold at path at.
func (l *Loaded) validateHold(at string, h *KVHold) error {
	switch {
	case h == nil:
		return nil
	case !slices.Contains(holdModes, h.Mode):
		return l.errorf(at+".mode", "unknown mode %q (known: %s)", h.Mode, strings.Join(holdModes, ", "))
	case h.Mode == "timeout" && h.Lease != nil:
		return l.errorf(at+".lease", "goes with mode: lease, not timeout")
	case h.Mode == "lease" && h.Timeout != nil:
		return l.errorf(at+".timeout", "goes with mode: timeout, not lease")
	case h.Timeout != nil && *h.Timeout < 0:
		return l.errorf(at+".timeout", "must not be negative (0 holds the KV until it is pulled)")
	case h.Timeout != nil && *h.Timeout > maxTimeout:
		return l.errorf(at+".timeout", "must be at most 1 year, got %v", *h.Timeout)
	case h.Lease != nil && (*h.Lease < 1e9 || *h.Lease%1e9 != 0 || *h.Lease > maxTimeout):
		return l.errorf(at+".lease", "must be a whole number of seconds from 1s to 1 year (vLLM's kv_lease_duration), got %v", *h.Lease)
	}
	return nil
}

// validateDecodeFirst checks a decode pool's decode_first.
func (l *Loaded) validateDecodeFirst(at string, p *Pool) error {
	d := p.DecodeFirst
	switch {
	case d == nil:
		return nil
	case p.Role != "decode":
		return l.errorf(at+".decode_first", "applies to decode pools, not %s", p.Role)
	case p.Wafer != nil:
		return l.errorf(at+".decode_first", "a wafer's slots cannot take a request first: decode-first needs a GPU decoder's paged KV pool")
	case strictyaml.Find(l.root, at+decodeFirstThresholdAt) == nil:
		return l.errorf(at+".decode_first", "needs cache_hit_threshold: the least cached share of the prompt the decoder serves a request whole at (0 to 1)")
	case !(d.CacheHitThreshold >= 0 && d.CacheHitThreshold <= 1):
		return l.errorf(at+decodeFirstThresholdAt, "must be in [0, 1], got %g", d.CacheHitThreshold)
	}
	if pol, _ := policy(l.Router.Policy); pol.decodesLater {
		return l.errorf(at+".decode_first", "llm-d's decode-first flow sends a request to its decoder before any prefill: "+
			"the router must pick the decoder when the request arrives (%s), not %s, which picks it after the prefill",
			strings.Join(arrivalDecoders(), ", "), pol.name)
	}
	return nil
}

// arrivalDecoders lists the router policies that pick the decoder when a
// request arrives.
func arrivalDecoders() []string {
	var names []string
	for _, p := range routerPolicies {
		if !p.decodesLater {
			names = append(names, p.name)
		}
	}
	return names
}

// applyHandoff sets a pool's handoff settings on its instance template.
func applyHandoff(p *Pool, inst *sim.Instance) {
	if h := p.KVHold; h != nil {
		inst.KVHold = h.sim()
	}
	inst.StrandRejected = p.NotifyRejected != nil && !*p.NotifyRejected
	inst.RecomputeLoadFailures = p.KVLoadFailurePolicy == "recompute"
	if d := p.DecodeFirst; d != nil {
		inst.DecodeFirst, inst.DecodeFirstThreshold = true, d.CacheHitThreshold
	}
}

// sim is the core's KVHold. A lease of s seconds heartbeats every s // 6
// seconds and extends the KV 2·s // 3 seconds past each heartbeat, in
// vLLM's integer seconds (the NIXL connector's base_scheduler.py:
// _heartbeat_interval = kv_lease_duration // 6; worker:
// _lease_extension = kv_lease_duration * 2 // 3).
func (h *KVHold) sim() sim.KVHold {
	if h.Mode == "lease" {
		s := int64(*h.Lease) / 1e9
		return sim.KVHold{Lease: true, LeaseNs: s * 1e9, HeartbeatNs: s / 6 * 1e9, ExtendNs: s * 2 / 3 * 1e9}
	}
	return sim.KVHold{TimeoutNs: int64(*h.Timeout)}
}
