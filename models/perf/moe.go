package perf

import (
	"math"

	"handoff/models/llm"
)

// Routed experts.
//
// A MoE layer's routed experts are priced per device as the kernel vLLM
// dispatches them with runs them (moekernels.go). For a step whose T
// tokens each pick k of E experts, uniformly and independently, the
// tokens an expert gets are n ~ Binomial(T, k/E), and per MoE layer
//
//   - the device reads each of its local experts the step touches once,
//     as stored (packed FP4 with its scales, FP8, BF16; the kernel's
//     padded layout): expected distinct experts E_local·(1 − (1 − k/E)^T),
//     so a decode step of one token reads k experts and a large step all;
//   - each touched expert's matmuls run over its tokens padded up to the
//     kernel's M tile bm: expected rows E_local·bm·E[⌈n/bm⌉], each
//     2·(the expert's weights on the device) FLOPs — 3 tokens on an
//     expert with a 16-row tile cost 16 rows. The padded rows are whole
//     tensor-core tiles, so they are priced at the device's MFU (decode's
//     own MFU stands for the small matrices of the other layers);
//   - the kernel chain's fixed time (Serving.MoELayerFixedNs, measured).
//
// The router's matmul, shared experts and dense layers (a DeepSeek's) are
// in the shared weights: read every step and computed at one row per
// token, as the dense layers are. Routing that is skewed, or tokens that
// are alike, touch fewer experts than the uniform draw, which is the most
// a batch can touch.
type routedTerms struct {
	kernel     moeKernel
	topK       int       // k
	local      float64   // experts on the device: E, or E/EP
	kernelExps int       // experts in the kernel's weight tensor (the device's), for its tile rule
	keep       float64   // 1 − k/E, the chance a token skips a given expert
	logKeep    float64   // ln(1 − k/E)
	bytesEach  float64   // one local expert's stored bytes on the device, all MoE layers
	flopsRow   float64   // one padded row through one local expert, all MoE layers, at the rest's peak
	fixedNs    float64   // the MoE layers' fixed kernel time per step
	touchedBy  []float64 // expected experts touched, steps of fewer than exactTable tokens
	rowsBy     []float64 // expected padded rows per layer, steps of up to rowsTable − 1 tokens
}

// exactTable is how many step sizes (0 to 511 tokens) a routedTerms keeps
// exact expectations for; from there to rowsTable − 1 (8,192 tokens,
// vLLM's default token budget on a large GPU) it keeps the rows from the
// normal approximation of the binomial (tilesNormal), and larger steps
// compute them. Every step within the tables costs two lookups.
const (
	exactTable = 512
	rowsTable  = 8192 + 1
)

// newRoutedTerms precomputes the routed experts of m on one device that
// holds local of its E experts, each split over split ranks (TP; 1 under
// expert parallelism), run by kernel; peakScale is the experts' peak
// relative to the rest's and its efficiency relative to theirs
// (expertScales) and fixedNs the MoE layers' fixed time per step.
func newRoutedTerms(m *llm.Model, kernel moeKernel, local, split int, scale expertScale, fixedNs float64) *routedTerms {
	pad := kernel.padFactor(m, split)
	x := &routedTerms{kernel: kernel, topK: m.ExpertsPerTok, local: float64(local),
		kernelExps: local, keep: 1 - float64(m.ExpertsPerTok)/float64(m.Experts),
		logKeep:   math.Log1p(-float64(m.ExpertsPerTok) / float64(m.Experts)),
		bytesEach: m.ExpertBytesTotal() / float64(m.Experts) / float64(split) * pad * scale.bytes,
		flopsRow:  2 * m.ExpertParamsEach() / float64(split) * pad * scale.flops,
		fixedNs:   fixedNs,
		touchedBy: make([]float64, exactTable), rowsBy: make([]float64, rowsTable)}
	p := 1 - x.keep
	for t := range exactTable {
		bm := x.tile(t)
		x.touchedBy[t] = x.local * (1 - math.Pow(x.keep, float64(t)))
		x.rowsBy[t] = x.local * float64(bm) * tilesExact(t, p, bm)
	}
	for t := exactTable; t < rowsTable; t++ {
		x.rowsBy[t] = x.normalRows(t, x.skipAll(t))
	}
	return x
}

// tile is the kernel's M tile for a step of tokens tokens.
func (x *routedTerms) tile(tokens int) int { return x.kernel.tile(tokens, x.topK, x.kernelExps) }

// expect is the expected number of the device's experts a step of tokens
// tokens touches, and the matmul rows per MoE layer over them: each
// expert's tokens padded up to the kernel's tile.
func (x *routedTerms) expect(tokens int) (touched, rows float64) {
	if tokens < exactTable {
		return x.touchedBy[tokens], x.rowsBy[tokens]
	}
	skipAll := x.skipAll(tokens)
	if tokens < rowsTable {
		return x.local * (1 - skipAll), x.rowsBy[tokens]
	}
	return x.local * (1 - skipAll), x.normalRows(tokens, skipAll)
}

// skipAll is (1 − k/E)^tokens, the chance a given expert gets none of the
// step's tokens; 0 once it falls below 1e-17.
func (x *routedTerms) skipAll(tokens int) float64 {
	if e := float64(tokens) * x.logKeep; e > -40 {
		return math.Exp(e)
	}
	return 0
}

// normalRows is the expected padded rows per layer of a step of tokens
// tokens from the normal approximation (tilesNormal).
func (x *routedTerms) normalRows(tokens int, skipAll float64) float64 {
	bm := x.tile(tokens)
	return x.local * float64(bm) * tilesNormal(tokens, 1-x.keep, skipAll, bm)
}

// touched is expect's experts touched.
func (x *routedTerms) touched(tokens int) float64 { t, _ := x.expect(tokens); return t }

// rows is expect's padded rows.
func (x *routedTerms) rows(tokens int) float64 { _, r := x.expect(tokens); return r }

// work is the routed experts' FLOPs and bytes on the device for a step of
// tokens tokens; extraRows adds rows beyond the uniform draw's (the
// busiest device's surplus under expert parallelism).
func (x *routedTerms) work(tokens int, extraRows float64) (flops, bytes float64) {
	if tokens == 0 {
		return 0, 0
	}
	touched, rows := x.expect(tokens)
	return (rows + extraRows) * x.flopsRow, touched * x.bytesEach
}

// tilesExact is E[⌈n/bm⌉] for n ~ Binomial(t, p), summed over the
// binomial's mass outward from its mode until the terms fall below 1e-17
// of it.
func tilesExact(t int, p float64, bm int) float64 {
	if t == 0 || p <= 0 {
		return 0
	}
	if p >= 1 {
		return float64((t + bm - 1) / bm)
	}
	mode := min(t, int(float64(t+1)*p))
	lt, _ := math.Lgamma(float64(t + 1))
	lm, _ := math.Lgamma(float64(mode + 1))
	lr, _ := math.Lgamma(float64(t - mode + 1))
	peak := math.Exp(lt - lm - lr + float64(mode)*math.Log(p) + float64(t-mode)*math.Log1p(-p))
	odds := p / (1 - p)
	tiles := func(n int) float64 { return float64((n + bm - 1) / bm) }
	sum := peak * tiles(mode)
	for n, pmf := mode, peak; n > 0 && pmf > 1e-17*peak; n-- { // pmf(n−1) from pmf(n)
		pmf *= float64(n) / float64(t-n+1) / odds
		sum += pmf * tiles(n-1)
	}
	for n, pmf := mode, peak; n < t && pmf > 1e-17*peak; n++ { // pmf(n+1) from pmf(n)
		pmf *= float64(t-n) / float64(n+1) * odds
		sum += pmf * tiles(n+1)
	}
	return sum
}

// tilesNormal is E[⌈n/bm⌉] = Σ_{j≥0} P(n > j·bm) for n ~ Binomial(t, p),
// P(n > 0) = 1 − skipAll exact and the rest from the normal approximation with a
// continuity correction, over the tiles within 7 standard deviations of
// the mean (those below count whole). A step of 512 tokens or more has
// ten or more tokens per expert for every catalog model, where it is
// within 1.1% of the exact sum (TestTilesNormalMeetsExact).
func tilesNormal(t int, p, skipAll float64, bm int) float64 {
	mean := float64(t) * p
	sd := math.Sqrt(mean * (1 - p))
	sum := 1 - skipAll
	if sd == 0 {
		return sum + math.Max(0, math.Ceil(mean/float64(bm))-1)
	}
	b := float64(bm)
	lo := max(1, int(math.Floor((mean-7*sd)/b)))
	hi := int(math.Ceil((mean + 7*sd) / b))
	sum += float64(lo - 1)
	for j := lo; j <= hi; j++ {
		sum += 0.5 * math.Erfc((float64(j)*b+0.5-mean)/(sd*math.Sqrt2))
	}
	return sum
}
