package perf

import (
	"fmt"
	"math"

	"handoff/hardware"
	"handoff/models/llm"
)

// WaferConfig configures a Wafer. Zero MFU, MBU, PrefillEfficiency,
// LayerLatencyNs or WidthLatencyNs means "the device's catalog value";
// StepOverheadNs = -1 means "the device's catalog value" (0 is a real zero
// overhead).
type WaferConfig struct {
	Model             *llm.Model
	Device            hardware.Accelerator // one wafer, kind wafer
	Wafers            int                  // pipeline stages (wafers the weights are split over), >= 1
	Link              hardware.Link        // between consecutive wafers; ignored when Wafers == 1
	LayerLatencyNs    int64                // one token across one layer, fixed part; 0 = Device.Wafer's
	WidthLatencyNs    int64                // one token across one layer, per 1,000 of hidden; 0 = Device.Wafer's
	PrefillEfficiency float64              // share of MFU prompt tokens reach; 0 = Device.Wafer.PrefillEfficiency
	MFU               float64              // 0 = Device.MFU
	MBU               float64              // fraction of SRAM bandwidth reached; 0 = Device.MBU
	StepOverheadNs    int64                // fixed cost per step, ns; -1 = Device.StepOverheadNs
}

// actBytes is the size of one activation element passed between wafers
// (BF16).
const actBytes = 2

// Wafer is the step-time model of a wafer-scale SRAM decoder. The weights
// are resident in on-wafer SRAM, split layer-wise over Wafers pipeline
// stages; each stage holds 1/Wafers of the layers, of the weights and of
// every sequence's KV. One step advances every sequence in the batch by its
// scheduled tokens.
//
// Pipelining assumption: the step's s sequences travel as m = min(s,
// Wafers) micro-batches of equal size (tokens, context and attention work
// divided by m). A micro-batch's round trip crosses every stage in turn, so
// its latency is the sum over stages; the other micro-batches overlap it on
// the other stages, and since m ≤ Wafers a stage is never the bottleneck:
// the step takes one round trip,
//
//	step = layers·(layerLatency + widthLatency·hidden/1000)
//	     + (Wafers−1)·(link latency + hop/m)
//	     + Wafers·max(FLOPs/(m·Wafers·peak·MFU), bytes/(bw·MBU)) + overhead
//
// where
//
//   - the first term is the dataflow latency of a token through every
//     decoder layer: each stage adds its layers/Wafers layers, each layer a
//     fixed part and a part that grows with the hidden width (the fabric
//     latency of the layer's broadcasts and reductions). layerLatency and
//     widthLatency are the device's calibrated figures (hardware.Wafer);
//     on SRAM they dominate decode, the bandwidth and compute terms are
//     microseconds;
//   - FLOPs = n·FLOPsPerToken + AttnFLOPsPerPair·(PrefillAttn +
//     DecodeContext), with prompt FLOPs priced at peak·MFU·PrefillEfficiency
//     (prefill is possible on the wafer but slow). A single prompt is one
//     micro-batch, so its FLOPs run at one wafer's rate;
//   - bytes = weights/Wafers + KVBytesPerToken/Wafers·(DecodeContext +
//     PrefillCtxRead + n)/m: each stage reads its resident weights once per
//     micro-batch from SRAM, and the KV the micro-batch attends (MoE models
//     are charged all their weights, an over-estimate of a few µs);
//   - hop = n·hidden·2 bytes of BF16 activations over the inter-wafer link.
//
// A single sequence's decode is therefore a chain through every layer;
// spreading the layers over more wafers adds link hops but does not shorten
// the chain. Many sequences fill the pipeline at no extra latency until
// their work grows past it. Consecutive steps never overlap: a sequence's
// next token needs its previous one. An empty batch costs 0. A Wafer is
// immutable and StepNs does not allocate.
type Wafer struct {
	wafers        float64
	nsPerFLOP     float64 // decode: 1e9 / (peak·MFU)
	nsPerFLOPPre  float64 // prefill: nsPerFLOP / PrefillEfficiency
	nsPerByte     float64 // 1e9 / (SRAM bw·MBU)
	flopsPerTok   float64 // whole model
	attnPerPair   float64 // whole model
	weightsStageB float64 // weight bytes per stage
	kvStageB      float64 // KV bytes per token per stage
	hopNsPerToken float64 // (Wafers−1)·hidden·2 / link bw, ns
	fixedNs       float64 // layers·layer latency + (Wafers−1)·link latency + overhead
}

// NewWafer validates cfg, fills the device defaults and precomputes the
// per-step constants. It returns an error naming the field for a nil model,
// a device not of kind wafer, Wafers < 1, weights that do not fit in
// Wafers × SRAM, an efficiency factor outside (0, 1], a non-positive layer
// or width latency, a negative overhead, or Wafers > 1 with a link of no
// bandwidth.
func NewWafer(cfg WaferConfig) (*Wafer, error) {
	if err := cfg.fillDefaults(); err != nil {
		return nil, err
	}
	m, d, w := cfg.Model, cfg.Device, float64(cfg.Wafers)
	x := &Wafer{
		wafers:        w,
		nsPerFLOP:     1e9 / (d.BF16FLOPS * cfg.MFU),
		nsPerByte:     1e9 / (d.MemoryBandwidthBps * cfg.MBU),
		flopsPerTok:   m.FLOPsPerToken(),
		attnPerPair:   m.AttnFLOPsPerPair(),
		weightsStageB: m.WeightBytesTotal() / w,
		kvStageB:      m.KVBytesPerToken() / w,
		fixedNs:       float64(m.Layers)*cfg.layerNs() + float64(cfg.StepOverheadNs),
	}
	x.nsPerFLOPPre = x.nsPerFLOP / cfg.PrefillEfficiency
	if cfg.Wafers > 1 {
		x.hopNsPerToken = (w - 1) * float64(m.Hidden) * actBytes / cfg.Link.BandwidthBps * 1e9
		x.fixedNs += (w - 1) * float64(cfg.Link.LatencyNs)
	}
	return x, nil
}

// layerNs is the dataflow latency, ns, of one token across one decoder
// layer of the model.
func (c *WaferConfig) layerNs() float64 {
	return float64(c.LayerLatencyNs) + float64(c.WidthLatencyNs)*float64(c.Model.Hidden)/1000
}

// fillDefaults replaces zero factors with the device's and validates.
func (c *WaferConfig) fillDefaults() error {
	if c.Model == nil {
		return fmt.Errorf("perf: wafer: model is nil")
	}
	d := &c.Device
	if c.MFU == 0 {
		c.MFU = d.MFU
	}
	if c.MBU == 0 {
		c.MBU = d.MBU
	}
	if c.PrefillEfficiency == 0 {
		c.PrefillEfficiency = d.Wafer.PrefillEfficiency
	}
	if c.LayerLatencyNs == 0 {
		c.LayerLatencyNs = d.Wafer.LayerLatencyNs
	}
	if c.WidthLatencyNs == 0 {
		c.WidthLatencyNs = d.Wafer.WidthLatencyNs
	}
	if c.StepOverheadNs == -1 {
		c.StepOverheadNs = d.StepOverheadNs
	}
	return c.validate()
}

func (c *WaferConfig) validate() error {
	name := c.Device.Name
	switch {
	case c.Device.Kind != hardware.KindWafer:
		return fmt.Errorf("perf: wafer %s: device kind is %q, not wafer", name, c.Device.Kind)
	case c.Wafers < 1:
		return fmt.Errorf("perf: wafer %s: wafers %d < 1", name, c.Wafers)
	case !(c.MFU > 0 && c.MFU <= 1):
		return fmt.Errorf("perf: wafer %s: mfu %g not in (0, 1]", name, c.MFU)
	case !(c.MBU > 0 && c.MBU <= 1):
		return fmt.Errorf("perf: wafer %s: mbu %g not in (0, 1]", name, c.MBU)
	case !(c.PrefillEfficiency > 0 && c.PrefillEfficiency <= 1):
		return fmt.Errorf("perf: wafer %s: prefill_efficiency %g not in (0, 1]", name, c.PrefillEfficiency)
	case c.LayerLatencyNs <= 0:
		return fmt.Errorf("perf: wafer %s: layer_latency %d ns must be positive", name, c.LayerLatencyNs)
	case c.WidthLatencyNs <= 0:
		return fmt.Errorf("perf: wafer %s: width_latency %d ns must be positive", name, c.WidthLatencyNs)
	case c.StepOverheadNs < 0:
		return fmt.Errorf("perf: wafer %s: step overhead %d ns < 0", name, c.StepOverheadNs)
	case !(c.Device.MemoryBandwidthBps > 0) || !(c.Device.BF16FLOPS > 0) || !(c.Device.MemoryBytes > 0):
		return fmt.Errorf("perf: wafer %s: memory, memory_bandwidth and bf16 must be positive", name)
	case c.Wafers > 1 && !(c.Link.BandwidthBps > 0):
		return fmt.Errorf("perf: wafer %s: %d wafers need a pipeline link, %q has bandwidth %g B/s",
			name, c.Wafers, c.Link.Name, c.Link.BandwidthBps)
	case c.Wafers > 1 && c.Link.LatencyNs < 0:
		return fmt.Errorf("perf: wafer %s: link %q latency %d ns < 0", name, c.Link.Name, c.Link.LatencyNs)
	}
	if over := c.Model.WeightBytesTotal() - float64(c.Wafers)*c.Device.MemoryBytes; over > 0 {
		return fmt.Errorf("perf: wafer %s: %s's %.1f GB of weights exceed %d wafers' %.1f GB of SRAM by %.1f GB",
			name, c.Model.Name, c.Model.WeightBytesTotal()/1e9, c.Wafers,
			float64(c.Wafers)*c.Device.MemoryBytes/1e9, over/1e9)
	}
	return nil
}

// StepNs returns the duration of one step in nanoseconds (see Wafer).
// Cost: O(1), no allocation.
func (x *Wafer) StepNs(b *Batch) int64 {
	if b.Empty() {
		return 0
	}
	return roundNs(min(x.stepNs(b), maxStepNs))
}

// stepNs is StepNs in float64 nanoseconds.
func (x *Wafer) stepNs(b *Batch) float64 {
	mb := math.Min(float64(b.PrefillSeqs+b.DecodeSeqs), x.wafers) // micro-batches in flight
	n := float64(b.Tokens())
	preFLOPs := float64(b.PrefillTokens)*x.flopsPerTok + b.PrefillAttn*x.attnPerPair
	decFLOPs := float64(b.DecodeSeqs)*x.flopsPerTok + float64(b.DecodeContext)*x.attnPerPair
	computeNs := (preFLOPs*x.nsPerFLOPPre + decFLOPs*x.nsPerFLOP) / (mb * x.wafers)
	kvTokens := float64(b.DecodeContext+b.PrefillCtxRead) + n
	memNs := (x.weightsStageB + x.kvStageB*kvTokens/mb) * x.nsPerByte
	return x.fixedNs + n/mb*x.hopNsPerToken + x.wafers*math.Max(computeNs, memNs)
}
