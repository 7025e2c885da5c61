package scenarios

import "handoff/models/perf"

// The step-time models a pool's step_time.model may name. A new model is a
// file in models/perf (its Spec: fields, checks, constructor) and a line in
// stepTimeSpec; the wafer model goes with a wafer block (wafer_build.go).
var stepTimes = []string{"roofline", "polynomial", "table", defaultWaferStepTime}

// stepTimeSpec returns the Spec of the model st names (validatePool has
// checked the name; the wafer model's overrides are the roofline's).
func stepTimeSpec(st *StepTime) perf.Spec {
	switch st.Model {
	case "polynomial":
		return perf.PolynomialSpec{ProfileFile: st.ProfileFile}
	case "table":
		return perf.TableSpec{ProfileFile: st.ProfileFile}
	}
	return st.RooflineSpec
}
