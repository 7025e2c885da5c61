package perf

import (
	"io"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

// Spec is one step-time model's section of a scenario, step_time: {model:
// NAME, ...}: the fields it reads (YAML-tagged; the scenario inlines them
// in the section), their checks and its constructor. A scenario layer
// registers each model's Spec under its name in one place
// (scenarios/steptime.go); defaults are the zero values, which mean "the
// catalog's".
type Spec interface {
	// Check validates the section's fields, returning a
	// *spec.FieldError whose Field is relative to step_time.
	Check() error
	// New builds the step timer for one pool.
	New(env Env) (StepTimer, error)
}

// Env is what a pool gives its step-time model to build from.
type Env struct {
	Model      *llm.Model
	Device     hardware.Accelerator // one device (one TP rank)
	Layout     parallel.Layout      // how the instance spreads the model over its devices
	Compute    string               // the activations' tensor-core format: bf16, fp8, fp4 (RooflineConfig.Compute)
	ScaleUp    hardware.Link        // the link tensor-parallel all-reduces run over; TP > 1 only
	ScaleOut   hardware.Link        // the NIC between scale-up domains (expert parallelism across them)
	Domain     int                  // devices one scale-up domain joins; 0 = not bounded
	OverlapCPU bool                 // asynchronous scheduling (RooflineConfig.OverlapCPU)
	Release    string               // the vLLM release the pool runs, "0.N" ("" = the newest; RooflineConfig.Release)
	// Open opens a file the section names (relative to the scenario)
	// and returns it with the path to name it by in errors.
	Open func(name string) (io.ReadCloser, string, error)
}
