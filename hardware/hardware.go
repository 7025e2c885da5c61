// Package hardware is the catalog of accelerators and interconnect links that
// handoff simulates: memory, bandwidth, peak FLOPs, efficiency factors, power
// and cost for each accelerator, and per-direction bandwidth and latency for
// each link. The catalog is embedded YAML (catalog.yaml) plus any files a
// scenario points to. Every figure carries its source.
//
// Conventions: bytes are decimal (1 GB = 1e9 B); link bandwidth is per
// direction (vendors often quote NVLink bidirectionally, which is twice this);
// FLOPs are dense (no sparsity); times are integer nanoseconds.
package hardware

// Kind says how an accelerator holds KV state and so which engine model runs it.
type Kind string

// The accelerator kinds.
const (
	KindGPU      Kind = "gpu"      // HBM and a paged KV pool
	KindTrainium Kind = "trainium" // HBM and a paged KV pool, Neuron figures
	KindWafer    Kind = "wafer"    // on-wafer SRAM, compiled slots, no paged pool
	KindLPU      Kind = "lpu"      // on-die SRAM, deterministic pipeline
)

// Arch is a GPU's architecture generation, by which vLLM picks its kernels
// (the CUDA compute capability it checks, or AMD's CDNA generation).
type Arch string

// The architectures a catalog entry may name.
const (
	ArchAmpere    Arch = "sm80"  // A100
	ArchHopper    Arch = "sm90"  // H100, H200, H20
	ArchBlackwell Arch = "sm100" // B200, B300, GB200, GB300
	ArchCDNA3     Arch = "cdna3" // MI300X
	ArchCDNA4     Arch = "cdna4" // MI355X
)

// Valid reports whether a is one of the known architectures or unset.
func (a Arch) Valid() bool {
	switch a {
	case "", ArchAmpere, ArchHopper, ArchBlackwell, ArchCDNA3, ArchCDNA4:
		return true
	}
	return false
}

// Accelerator is one device (one TP rank) as the step-time models see it.
type Accelerator struct {
	Name               string
	Kind               Kind
	Arch               Arch    // "" = not named (the step models use their generic kernels)
	MemoryBytes        float64 // usable device memory (HBM or SRAM), bytes
	MemoryBandwidthBps float64 // bytes per second
	BF16FLOPS          float64 // dense peak, FLOP/s
	FP8FLOPS           float64 // dense peak, FLOP/s; 0 = not supported
	FP4FLOPS           float64 // dense peak, FLOP/s; 0 = no FP4 tensor cores
	MFU                float64 // fraction of peak FLOPs reached by compute-bound steps
	MBU                float64 // fraction of peak bandwidth reached by memory-bound steps
	StepOverheadNs     int64   // fixed cost of one engine iteration (launch, scheduling, sampling)
	ScaleUpLink        string  // link name used for tensor-parallel all-reduce
	ScaleUpDomain      int     // devices the scale-up link joins (an HGX board's 8 GPUs); 0 = not bounded
	ScaleOutLink       string  // per-device NIC link joining scale-up domains; "" = none
	PowerW             float64
	CostPerHour        float64    // USD per device-hour
	Source             string     // where the figures come from
	EfficiencySource   string     // where MFU, MBU and StepOverheadNs come from
	Serving            Serving    // the serving stack's costs beyond the roofline (serving.go)
	FactorsFrom        string     // the fitted accelerator whose factors this one borrows; "" = its own
	lent               lentFields // which of MFU, MBU, StepOverheadNs FactorsFrom lent (serving.go)
	Wafer              Wafer      // kind wafer only: pipeline and staging figures (wafer.go)
}

// Link is an interconnect as the network model sees it.
type Link struct {
	Name         string
	BandwidthBps float64 // per direction, bytes per second
	LatencyNs    int64   // one-way latency of a transfer's first byte
	Source       string
}

// PeakFLOPS is the dense peak in FLOP/s of the tensor-core format named
// format ("bf16", "fp8" or "fp4", as llm.DType.TensorFormat gives them); 0
// when the device lacks that format or the name is unknown.
func (a Accelerator) PeakFLOPS(format string) float64 {
	switch format {
	case "bf16":
		return a.BF16FLOPS
	case "fp8":
		return a.FP8FLOPS
	case "fp4":
		return a.FP4FLOPS
	}
	return 0
}
