// Package calibration is `handoff calibrate` without its flags and
// rendering: it runs the calibration set (scenarios/calibration's
// experiments and measured P/D runs) against the simulator, optionally
// fits an accelerator's factors first (and its MoE terms to the P/D runs,
// and each model left out), writes the fit back into a catalog file, and
// renders the comparison as Markdown or JSON.
//
// The algorithms (reading the measurements, simulating them, the fit, the
// error targets, rewriting a catalog entry) are scenarios/calibrate's;
// this package decides which of them a command runs, in which order, and
// what the report says — as scenarios/experiment/capacity does for
// scenarios/search.
//
// No process state: status lines go to the writer in the options,
// progress to the callback given (never at once with a status line).
//
// Reading guide: calibration.go, Calibrate, its options and the Report;
// fit.go, the fit's two stages, leave-one-out and the catalog written;
// report.go, the Markdown report; json.go, the JSON one.
package calibration
