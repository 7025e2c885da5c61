package autoscale

import (
	"errors"
	"fmt"
	"math"
)

// SLA configures the SLA planner, after Dynamo's throughput-based planner
// (components/src/dynamo/planner: planner_core.py and its prefill and
// decode planners). Every decision it feeds the interval's request rate
// and mean lengths to its predictors, updates its correction factors from
// the observed TTFT and TPOT, and sizes the pool for the predicted load
// (see NewSLA).
type SLA struct {
	Predictor string `yaml:"predictor"` // constant | kalman; default constant
	Kalman    Kalman `yaml:"kalman"`    // kalman only

	// Correction turns the correction factors on (default true; Dynamo's
	// --no-correction turns them off).
	Correction *bool `yaml:"correction"`
	// PrefillCorrectionMax caps the prefill factor. The default, 1, is
	// Dynamo's min(1, p_correction_factor): a TTFT below the expected one
	// (prefix-cache hits) lowers the prefill count, a higher one (queueing)
	// does not raise it. Above 1, queueing raises the count in proportion.
	PrefillCorrectionMax *float64 `yaml:"prefill_correction_max"`
}

// The roles the planner sizes, as scenarios name a pool's role.
const (
	RolePrefill   = "prefill"
	RoleDecode    = "decode"
	RoleColocated = "colocated"
)

// Defaults fills what the section left out: the constant predictor,
// Dynamo's Kalman parameters, corrections on, the prefill factor capped
// at 1.
func (c *SLA) Defaults() {
	if c.Predictor == "" {
		c.Predictor = PredictConstant
	}
	c.Kalman.defaults()
	if c.Correction == nil {
		on := true
		c.Correction = &on
	}
	if c.PrefillCorrectionMax == nil {
		one := 1.0
		c.PrefillCorrectionMax = &one
	}
}

// Validate checks c after Defaults; errors name fields relative to the
// section ("kalman.r: ...").
func (c *SLA) Validate() error {
	var errs []error
	switch c.Predictor {
	case PredictConstant, PredictKalman:
	default:
		errs = append(errs, fieldErr("predictor", "%q is not one of constant, kalman "+
			"(Dynamo's arima and prophet are not modelled)", c.Predictor))
	}
	errs = append(errs, prefixed("kalman", c.Kalman.validate()))
	if m := c.PrefillCorrectionMax; m == nil || !(*m > 0) || math.IsInf(*m, 0) {
		errs = append(errs, fieldErr("prefill_correction_max", "must be > 0 and finite"))
	}
	return errors.Join(errs...)
}

// NewSLA returns the planner c describes for a pool of the given role
// whose instances capa describes, held to the TTFT and TPOT targets.
// Each decision, with rate, isl and osl the predicted request rate and
// mean lengths:
//
//   - prefill: ⌈rate · isl · min(PrefillCorrectionMax, p) / prefill
//     tokens/s of one instance at the TTFT target⌉, p = observed TTFT /
//     PrefillNs(isl);
//   - decode: ⌈rate · osl / decode tokens/s of one instance at the TPOT
//     target divided by d⌉, d = observed TPOT / DecodeStepNs at the
//     observed running requests per instance;
//   - colocated: the larger of the two.
//
// An interval without the traffic a role is sized from (no request routed
// to the pool; for decode, none finished) keeps the count, as Dynamo skips
// an adjustment whose metrics are NaN. c must have passed Defaults and
// Validate; an unknown role or a target ≤ 0 is an error.
func NewSLA(c SLA, role string, capa Capacity, ttftNs, tpotNs int64) (Policy, error) {
	c.Defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if role != RolePrefill && role != RoleDecode && role != RoleColocated {
		return nil, fmt.Errorf("autoscale: role %q is not one of prefill, decode, colocated", role)
	}
	if ttftNs <= 0 || tpotNs <= 0 {
		return nil, fmt.Errorf("autoscale: the SLA planner needs TTFT and TPOT targets > 0 (got %d ns, %d ns)", ttftNs, tpotNs)
	}
	p := &sla{cfg: c, role: role, capa: capa, ttftNs: ttftNs, tpotNs: tpotNs, pCorr: 1, dCorr: 1}
	p.rate, p.isl, p.osl = c.newPredictor(), c.newPredictor(), c.newPredictor()
	return p, nil
}

func (c *SLA) newPredictor() predictor {
	if c.Predictor == PredictKalman {
		return newKalman(c.Kalman)
	}
	return &constant{}
}

// sla is one pool's planner: three predictors and two correction factors,
// O(1) state.
type sla struct {
	cfg            SLA
	role           string
	capa           Capacity
	ttftNs, tpotNs int64
	rate, isl, osl predictor
	pCorr, dCorr   float64 // the last factors computed (1 until then), as Dynamo keeps them
}

// Desired observes o, then sizes the pool from the forecast.
func (s *sla) Desired(o *Observation) int {
	s.observe(o)
	if !s.sized(o) {
		return o.Current()
	}
	rate := max(s.rate.next(), 0)
	isl, osl := max(s.isl.next(), 0), max(s.osl.next(), 0)
	n := 0
	if s.role != RoleDecode {
		n = max(n, s.prefillCount(rate, isl))
	}
	if s.role != RolePrefill {
		n = max(n, s.decodeCount(rate, isl, osl))
	}
	return n
}

// sized reports whether o carries what the role is sized from.
func (s *sla) sized(o *Observation) bool {
	if o.Requests == 0 || o.IntervalNs <= 0 {
		return false
	}
	return s.role == RolePrefill || o.FinishedCount > 0
}

// observe feeds the predictors (the rate every interval; the lengths when
// the interval measured them) and recomputes the correction factors the
// interval's latencies allow (Dynamo's observe_metrics and
// _update_correction_factor).
func (s *sla) observe(o *Observation) {
	if o.IntervalNs > 0 {
		s.rate.observe(float64(o.Requests) / (float64(o.IntervalNs) / 1e9))
	}
	if o.Requests > 0 {
		s.isl.observe(o.MeanInput)
	}
	if o.FinishedCount > 0 {
		s.osl.observe(o.MeanOutput)
	}
	if !*s.cfg.Correction {
		return
	}
	if o.MeanTTFTNs > 0 && o.Requests > 0 && s.role != RoleDecode {
		if want := s.capa.PrefillNs(o.MeanInput); want > 0 {
			s.pCorr = o.MeanTTFTNs / float64(want)
		}
	}
	if o.MeanTPOTNs > 0 && o.FinishedCount > 0 && s.role != RolePrefill {
		batch := max(o.Running, 1)
		if want := s.capa.DecodeStepNs(o.MeanInput, o.MeanOutput, batch); want > 0 {
			s.dCorr = o.MeanTPOTNs / float64(want)
		}
	}
}

// prefillCount is Dynamo's prefill replica computation: the predicted
// prompt tokens per second, scaled by the capped correction factor, over
// one instance's prefill throughput at the TTFT target.
func (s *sla) prefillCount(rate, isl float64) int {
	load := rate * isl * min(*s.cfg.PrefillCorrectionMax, s.pCorr)
	per := s.capa.PrefillTokensPerSec(isl, s.ttftNs)
	return instancesFor(load, per)
}

// decodeCount is Dynamo's decode replica computation: the TPOT target is
// divided by the correction factor, and the predicted output tokens per
// second are divided by one instance's decode throughput at that target.
func (s *sla) decodeCount(rate, isl, osl float64) int {
	tpot := s.tpotNs
	if s.dCorr > 0 {
		tpot = max(int64(float64(s.tpotNs)/s.dCorr), 1)
	}
	per := s.capa.DecodeTokensPerSec(isl, osl, tpot)
	return instancesFor(rate*osl, per)
}

// instancesFor is ⌈load/per⌉, forgiving float error at whole numbers;
// with no capacity to divide by (per ≤ 0) it asks for none, leaving the
// pool at its minimum as Dynamo falls back to min_endpoint.
func instancesFor(load, per float64) int {
	if !(per > 0) || !(load > 0) {
		return 0
	}
	return ceilCount(load/per - 1e-9)
}
