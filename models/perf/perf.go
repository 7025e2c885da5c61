// Package perf holds the step-time models: given what one engine iteration
// computes, how long it takes. The default is a roofline over the served
// model and the accelerator; a DistServe-style polynomial and a table
// interpolated from measured profiles are the alternatives. Each model owns
// its scenario section (a Spec: fields, checks, constructor; spec.go), so
// a new one is a file here plus one line in scenarios/steptime.go.
package perf

// Batch summarises the work of one engine iteration (one forward pass over a
// continuous batch). The engine fills it; step-time models read it. A request
// is a prefill sequence in a step if it computes more than one new token or is
// not yet past its prompt; otherwise it is a decode sequence.
type Batch struct {
	PrefillSeqs     int     // sequences computing prompt (or re-prefill) tokens
	PrefillTokens   int     // Σ new tokens over prefill sequences
	PrefillTokensSq float64 // Σ (new tokens)² over prefill sequences
	PrefillAttn     float64 // Σ attended query·key pairs: new·(ctxBefore + (new+1)/2)
	PrefillCtxRead  int64   // Σ tokens of KV already cached that prefill chunks read (ctxBefore)
	DecodeSeqs      int     // sequences computing exactly one new token
	DecodeContext   int64   // Σ context length (KV tokens read) over decode sequences
	SwapBlocks      int     // KV blocks copied between device and host tier in this step (swap)

	// Speculative decoding (models/engine/spec.go): the draft tokens the
	// decode sequences verify beside their own, k each, and the query·key
	// pairs those k positions attend past the decode token's context
	// (k·(ctx+1) + k(k+1)/2 for a sequence of context ctx). A verify
	// step of B sequences is a decode step of (k+1)·B query tokens whose
	// KV is read once per sequence. 0 without speculative decoding.
	SpecTokens int
	SpecAttn   int64
}

// Tokens is the number of new tokens the step computes, draft tokens
// verified included.
func (b *Batch) Tokens() int { return b.PrefillTokens + b.DecodeSeqs + b.SpecTokens }

// Empty reports whether the step computes nothing.
func (b *Batch) Empty() bool { return b.PrefillSeqs == 0 && b.DecodeSeqs == 0 }

// WithSwap adds the time of a step's host-tier copies to t's price: each
// swapped block costs nsPerBlock (block bytes over the host link's
// bandwidth), serialised with the step as in vLLM V0, which copies blocks
// before running the model.
func WithSwap(t StepTimer, nsPerBlock float64) StepTimer {
	return StepTimerFunc(func(b *Batch) int64 {
		return t.StepNs(b) + int64(float64(b.SwapBlocks)*nsPerBlock+0.5)
	})
}

// StepTimer prices one engine iteration in nanoseconds. Implementations are
// pure functions of the batch and their configuration; they are called once
// per simulated step, so they must not allocate.
type StepTimer interface {
	StepNs(b *Batch) int64
}

// GroupTimer prices one synchronous step of a data-parallel group from
// every rank's batch (nil: the rank has nothing to compute and runs a
// dummy step). Like StepNs it must not allocate.
type GroupTimer interface {
	GroupStepNs(ranks []*Batch) int64
}

// StepTimerFunc adapts a function to StepTimer.
type StepTimerFunc func(b *Batch) int64

// StepNs calls f(b).
func (f StepTimerFunc) StepNs(b *Batch) int64 { return f(b) }
