package scenarios

import "handoff/models/perf"

// stepTimeModel is a step-time model a pool's step_time.model may name,
// with the Spec it reads from the section.
type stepTimeModel struct {
	name string
	spec func(st *StepTime) perf.Spec
}

// stepTimeModels is the registry of step-time models, in the order errors
// list them. A new model is a file in models/perf (its Spec: fields,
// checks, constructor) and a line here, plus its Spec inlined in StepTime
// if it has fields of its own (TestStepTimeRegistryMatchesSchema checks
// each Spec's fields decode); the wafer model goes with a wafer block
// (wafer_build.go builds it) and takes the roofline's overrides.
var stepTimeModels = []stepTimeModel{
	{"roofline", func(st *StepTime) perf.Spec { return st.RooflineSpec }},
	{"polynomial", func(st *StepTime) perf.Spec { return perf.PolynomialSpec{ProfileFile: st.ProfileFile} }},
	{"table", func(st *StepTime) perf.Spec { return perf.TableSpec{ProfileFile: st.ProfileFile} }},
	{defaultWaferStepTime, func(st *StepTime) perf.Spec { return st.RooflineSpec }},
}

// stepTimeNames returns the registered models' names, in registry order.
func stepTimeNames() []string {
	var out []string
	for _, m := range stepTimeModels {
		out = append(out, m.name)
	}
	return out
}

// stepTimeSpec returns the Spec of the model st names, or nil for a name
// the registry does not hold.
func stepTimeSpec(st *StepTime) perf.Spec {
	for _, m := range stepTimeModels {
		if m.name == st.Model {
			return m.spec(st)
		}
	}
	return nil
}
