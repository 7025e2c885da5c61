// Package calibrate compares the simulator with measured serving runs and
// fits an accelerator's efficiency and serving factors to them.
//
// Reading guide:
//   - measured.go: the measured experiments (scenarios/calibration's CSVs)
//     and their stages.
//   - run.go: Run simulates every experiment for one set of hardware
//     factors, in parallel, and returns per-stage rows, sim vs measured.
//   - params.go: the named, bounded free parameters of a fit.
//   - profiles.go: step-time profiles (Splitwise, DistServe) as
//     pseudo-measurements of single steps.
//   - fit.go: Fit, least squares over the parameters by Nelder–Mead, and
//     LeaveOneOut, the same fit without one model, predicting it.
//   - targets.go: the error figures the report holds against its targets.
//   - rewrite.go: writes fitted factors back into a catalog YAML file.
//
// Nothing here is part of the simulation core: Run uses goroutines and
// Fit reads the wall clock for its progress lines, but every result is a
// function of the inputs alone.
package calibrate
