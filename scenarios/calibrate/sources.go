package calibrate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Source is what an accelerator is fitted to: which measurements, which
// parameters, and a one-line description for the catalog's provenance.
type Source struct {
	Accelerator string
	Experiments []Experiment
	Steps       []StepPoint
	Params      []Param
	Data        string // the data used, for efficiency_source
	Date        string // the newest measurement's date (YYYY-MM-DD), "" when the data carry none
	Borrowed    string // what the fit cannot identify and leaves as it is, "" when nothing
	// Written names the fitted parameters written to the catalog; nil:
	// all. The others are fitted only so that these are estimated
	// jointly with them (a profile's step floor beside its bandwidth).
	Written []string
}

// Writes reports whether the fit writes parameter name to the catalog.
func (s *Source) Writes(name string) bool {
	return s.Written == nil || slices.Contains(s.Written, name)
}

// Fittable are the accelerators Sources knows measurements for.
var Fittable = []string{"h100-sxm", "a100-80gb"}

// Sources returns what accel is fitted to: h100-sxm to the serving
// experiments in calibDir and the prefill steps of Splitwise's H100 rows;
// a100-80gb to
// Splitwise's A100 rows and DistServe's A100 profiles (step times only).
// profilesDir holds splitwise/perf_model.csv and distserve/*.json.
func Sources(accel, calibDir, profilesDir string) (Source, error) {
	splitwise := filepath.Join(profilesDir, "splitwise", "perf_model.csv")
	switch accel {
	case "h100-sxm":
		exps, err := ReadMeasured(calibDir)
		if err != nil {
			return Source{}, err
		}
		steps, err := SplitwisePoints(splitwise, "h100-80gb")
		if err != nil {
			return Source{}, err
		}
		ps, err := Lookup(Measured())
		return Source{Accelerator: accel, Experiments: exps, Steps: prefillSteps(steps), Params: ps, Date: newestDate(exps),
			Data: fmt.Sprintf("%d vLLM V1 H100 experiments (%s) + Splitwise H100 llama2-70b prefill steps", len(exps), calibDir)}, err
	case "a100-80gb":
		steps, err := SplitwisePoints(splitwise, "a100-80gb")
		if err != nil {
			return Source{}, err
		}
		for _, f := range []string{"profiler-a100-80g.distserve.json", "profiler-a100-80g.vllm.json"} {
			pts, err := DistServePoints(filepath.Join(profilesDir, "distserve", f))
			if err != nil {
				return Source{}, err
			}
			steps = append(steps, pts...)
		}
		ps, err := Lookup(StepOnly())
		return Source{Accelerator: accel, Steps: steps, Params: ps, Written: DeviceOnly(),
			Data: "Splitwise A100 llama2-70b step rows + DistServe A100 profiles (OPT-13B, OPT-66B; DistServe and vLLM engines)",
			Borrowed: "the serving stack's costs (step_overhead, step_per_seq, step_per_token, the front end and emission) stay h100-sxm's vLLM V1 fit: " +
				"these profiles come from 2023-24 stacks (Splitwise's decode steps have a ~28 ms floor) whose per-step costs today's vLLM does not have, " +
				"so they are fitted beside mfu, decode_mfu and mbu but not written; layer floors: not separable from step_overhead in step profiles"}, err
	}
	return Source{}, fmt.Errorf("calibrate: no measurements to fit %q (have %s)", accel, strings.Join(Fittable, ", "))
}

// prefillSteps keeps the compute-bound prompt steps of pts: at least
// minPrefillTokens prompt tokens. The serving experiments hit the prefix
// cache on nearly every prompt, so they say little about MFU; Splitwise's
// large prefill steps do, and large prompt GEMMs run at the kernel
// library's speed whatever the serving stack. Its decode rows and small
// prefills are left out: they carry its older stack's per-step floor
// (about 28 ms on A100), not vLLM V1's, which the serving experiments
// measure directly, and would pull the per-step and per-hop latencies.
func prefillSteps(pts []StepPoint) []StepPoint {
	var out []StepPoint
	for _, p := range pts {
		if p.Batch.PrefillSeqs > 0 && p.Batch.PrefillTokens >= minPrefillTokens {
			out = append(out, p)
		}
	}
	return out
}

// minPrefillTokens is the smallest prefill step prefillSteps keeps.
const minPrefillTokens = 2048

// newestDate returns the latest experiment date, "" when none has one.
func newestDate(exps []Experiment) string {
	var dates []string
	for _, e := range exps {
		if d := e.Stages[0].Date; d != "" {
			dates = append(dates, d)
		}
	}
	if len(dates) == 0 {
		return ""
	}
	return slices.Max(dates)
}
