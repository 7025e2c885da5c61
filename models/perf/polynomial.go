package perf

import "math"

// PolyCoeffs are DistServe-style fitted step-time coefficients, in
// milliseconds. Each triple is (a, b, c):
//
//	prefill ms = a + b·Σtokens + c·Σ(tokens²)   (sum over prefill sequences)
//	decode  ms = a + b·Σcontext + c·batch
//
// Decode uses DecodeSmall when batch < DecodeBatchThreshold and DecodeLarge
// otherwise (DistServe's profiles use 95).
type PolyCoeffs struct {
	Prefill              [3]float64 // a ms, b ms/token, c ms/token²
	DecodeSmall          [3]float64 // a ms, b ms/context token, c ms/sequence
	DecodeLarge          [3]float64 // same, for batch >= DecodeBatchThreshold
	DecodeBatchThreshold int        // decode sequences at which DecodeLarge takes over
}

// Polynomial prices a step with PolyCoeffs. The quadratic prefill term is
// the sum of squares of each prefill sequence's new tokens, as in
// DistServe's simulator (sum(x**2 for x in prefill lengths), not the square
// of the sum); it reads Batch.PrefillTokensSq. The decode context term reads
// Batch.DecodeContext (Σ tokens in each decoding sequence's KV).
//
// Mixed steps (chunked prefill with decodes, which DistServe never runs) are
// priced as prefill time + decode time − the smaller of the two constant
// terms a, so the per-step fixed cost is paid once, not twice. Results below
// zero (a negative fitted c far outside the profiled range) are clamped to
// zero. An empty batch costs 0. StepNs does not allocate.
type Polynomial struct {
	c PolyCoeffs
}

// NewPolynomial returns a Polynomial for c. It does not validate c: the
// parser does that for data read from files.
func NewPolynomial(c PolyCoeffs) *Polynomial { return &Polynomial{c: c} }

// StepNs returns the step's duration in nanoseconds. Cost: O(1).
func (p *Polynomial) StepNs(b *Batch) int64 {
	ms := p.StepMs(b)
	if ms <= 0 {
		return 0
	}
	return int64(math.Round(ms * 1e6))
}

// StepMs returns the step's duration in milliseconds, unclamped (it may be
// negative for coefficients used far outside their fitted range).
func (p *Polynomial) StepMs(b *Batch) float64 {
	var ms, aP, aD float64
	hasP, hasD := b.PrefillSeqs > 0, b.DecodeSeqs > 0
	if hasP {
		k := p.c.Prefill
		aP = k[0]
		ms += k[0] + k[1]*float64(b.PrefillTokens) + k[2]*b.PrefillTokensSq
	}
	if hasD {
		k := p.c.DecodeSmall
		if b.DecodeSeqs >= p.c.DecodeBatchThreshold {
			k = p.c.DecodeLarge
		}
		aD = k[0]
		ms += k[0] + k[1]*float64(b.DecodeContext) + k[2]*float64(b.DecodeSeqs)
	}
	if hasP && hasD {
		ms -= math.Min(aP, aD)
	}
	return ms
}
