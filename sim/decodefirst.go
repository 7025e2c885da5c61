package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/models/router"
)

// llm-d's decode-first flow: its P/D sidecar, beside each decoder, sends
// a request whose body carries cache_hit_threshold to that decoder first
// (llm-d-inference-scheduler, pkg/sidecar/proxy/connectors/
// decode_first_runner.go: DecodeFirstRunner.Run, tryDecodeStreaming; the
// shared-storage connector's runSharedStorageProtocol before it). The
// decoder — a vLLM that implements the threshold, as proposed in vLLM RFC
// #24256 and PR #24520 (closed unmerged) — refuses it at admission with
// finish reason cache_threshold when the share of the prompt it finds
// cached is below the threshold; else it serves the request whole,
// prefilling the uncached part itself. The sidecar looks at the first
// response chunk only: on cache_threshold it runs the prefill on the
// prefiller the scheduler chose with the request (max_tokens 1, threshold
// 0) and sends the request to the same decoder again with threshold 0,
// which pulls the KV as any disaggregated request does. Past that first
// chunk the request is an ordinary one: a later preemption on the
// decoder is recomputed there (or handled by the decoder's preemption
// policy).
//
// Here a decode-first decoder (Instance.DecodeFirst) gets every request
// the router sends it for a remote prefill first, as a local prefill on
// it with Seq.AdmitHitThreshold; a request the router sends to prefill on
// the decoder itself (llm-d's decider found enough cached) goes there as
// usual. The try's time — queued on the decoder until it refused — is
// decode_queue_first, the decoder's wait before the first token; the
// refusal counts in the decoder's rejections and the request's Bounces.
// The router must choose the decoder on arrival (Config.validate).

// decodeFirst returns the placement of flight f's attempt routed by d, and
// the cache-hit threshold its first instance admits it at: d itself, or,
// when d's decoder takes requests first, the decoder alone, the prefiller
// kept in f for a refusal.
func (c *cluster) decodeFirst(f *flight, d router.Decision) (router.Decision, float64) {
	f.bounceTo, f.bounceCached = 0, 0
	if d.Decode < 0 || !c.replicas[d.Decode].cfg.DecodeFirst {
		return d, 0
	}
	f.bounceTo, f.bounceCached = int32(d.Prefill)+1, int32(d.PrefillCached)
	return router.Decision{Prefill: d.Decode, Decode: -1}, c.replicas[d.Decode].cfg.DecodeFirstThreshold
}

// bounced reports whether a decoder's refusal of s is a decode-first
// try's: refused at its first admission, not after a preemption.
func (c *cluster) bounced(s *engine.Seq) bool {
	return c.flights.at(s.Ref).bounceTo != 0 && s.Preemptions == 0
}

// bounce handles a decode-first try decoder i refused: the request goes to
// the prefiller chosen with it, then back to decoder i for the KV, as a
// disaggregated request — or, that prefiller gone meanwhile, to the router
// again.
func (c *cluster) bounce(i int, s *engine.Seq) {
	ref := s.Ref
	f := c.flights.at(ref)
	c.enter(ref, phaseRejected)
	rec := c.record(f.req.ID)
	if rec.Bounces < 255 {
		rec.Bounces++
	}
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), "cache_threshold: prefill first", c.nowNs)
	}
	c.replicas[i].outstanding--
	c.loadChanged(i)
	c.unbook(f)
	c.recycle(i, s, rec)
	f.pseq, f.dseq = nil, nil
	d := router.Decision{Prefill: int(f.bounceTo) - 1, Decode: i, PrefillCached: int(f.bounceCached)}
	f.bounceTo, f.bounceCached = 0, 0
	if c.replicas[d.Prefill].life != lifeReady {
		c.enqueueRouting(ref)
		return
	}
	c.enter(ref, phaseRouting)
	c.enqueueAttempt(ref, d, 0)
}

// validateDecodeFirst checks that a router sending requests to
// decode-first decoders picks the decoder on arrival.
func (c *Config) validateDecodeFirst() error {
	if _, later := c.Router.(router.DecodeRouter); !later {
		return nil
	}
	for i := range c.Instances {
		if in := &c.Instances[i]; in.DecodeFirst {
			return fmt.Errorf("sim: instance %s takes requests first, but the router (%T) picks the decoder after the prefill", in.Name, c.Router)
		}
	}
	return nil
}
