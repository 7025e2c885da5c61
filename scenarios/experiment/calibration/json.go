package calibration

import (
	"encoding/json"
	"io"

	"handoff/scenarios/calibrate"
)

// calibJSON is the result of `handoff calibrate --json`: every stage and
// P/D run simulated against its measurement (times in s), and with --fit
// the fitted values by catalog key.
type calibJSON struct {
	Stages []calibStageJSON `json:"stages"`
	PD     []calibPDJSON    `json:"pd_runs"`
	Fit    *calibFitJSON    `json:"fit,omitempty"`
	MoE    map[string]any   `json:"moe_fit,omitempty"`
}

type calibStageJSON struct {
	Experiment string      `json:"experiment"`
	Model      string      `json:"model"`
	Stage      int         `json:"stage"`
	RateRPS    float64     `json:"rate_rps"`
	Overloaded bool        `json:"overloaded"`
	Measured   calibFigure `json:"measured"`
	Simulated  calibFigure `json:"simulated"`
}

// calibFigure is one side of a stage: requests and latencies.
type calibFigure struct {
	Completed int     `json:"completed"`
	TTFTMean  float64 `json:"ttft_mean_s"`
	TTFTP99   float64 `json:"ttft_p99_s"`
	PerToken  float64 `json:"decode_per_token_s"`
	E2EMean   float64 `json:"e2e_mean_s"`
	E2EP99    float64 `json:"e2e_p99_s"`
}

type calibPDJSON struct {
	Config      string     `json:"config"`
	Concurrency int        `json:"concurrency"`
	Measured    calibPDFig `json:"measured"`
	Simulated   calibPDFig `json:"simulated"`
}

type calibPDFig struct {
	TTFTMean   float64 `json:"ttft_mean_s"`
	TTFTMedian float64 `json:"ttft_median_s"`
	TTFTP99    float64 `json:"ttft_p99_s"`
	TPOTMean   float64 `json:"tpot_mean_s"`
	TPOTMedian float64 `json:"tpot_median_s"`
	TPOTP99    float64 `json:"tpot_p99_s"`
	OutputTPS  float64 `json:"output_tokens_per_s"`
	RequestRPS float64 `json:"request_throughput_rps"`
}

type calibFitJSON struct {
	Values         map[string]float64 `json:"values"`
	Objective      float64            `json:"objective"`
	StartObjective float64            `json:"start_objective"`
	Evals          int                `json:"evals"`
	ServingRMS     float64            `json:"serving_rms"`
	StepRMS        float64            `json:"step_rms"`
	PDRMS          float64            `json:"pd_rms"`
}

// WriteJSON prints the report as JSON (calibJSON): what
// `handoff calibrate --json` prints.
func (rep *Report) WriteJSON(w io.Writer) error {
	out := calibJSON{Stages: []calibStageJSON{}, PD: []calibPDJSON{}}
	for _, res := range rep.results {
		for _, r := range res.Rows {
			out.Stages = append(out.Stages, calibStageJSON{Experiment: r.Experiment, Model: r.Model, Stage: r.Index,
				RateRPS: r.Rate, Overloaded: r.Overloaded(),
				Measured: calibFigure{Completed: r.Stage.NSuccess, TTFTMean: r.Stage.TTFTMean, TTFTP99: r.Stage.TTFTP99,
					PerToken: r.Stage.PerToken(), E2EMean: r.Stage.E2EMean, E2EP99: r.Stage.E2EP99},
				Simulated: calibFigure{Completed: r.Completed, TTFTMean: r.TTFTMean, TTFTP99: r.TTFTP99,
					PerToken: r.PerToken, E2EMean: r.E2EMean, E2EP99: r.E2EP99}})
		}
	}
	for _, res := range rep.pd {
		for _, r := range res.Rows {
			m := r.Measured
			out.PD = append(out.PD, calibPDJSON{Config: res.Config, Concurrency: m.Concurrency,
				Measured:  calibPDFig{m.TTFTMean, m.TTFTMedian, m.TTFTP99, m.TPOTMean, m.TPOTMedian, m.TPOTP99, m.OutputTPS, m.RequestRPS},
				Simulated: calibPDFig{r.TTFTMean, r.TTFTMedian, r.TTFTP99, r.TPOTMean, r.TPOTMedian, r.TPOTP99, r.OutputTPS, r.RequestRPS}})
		}
	}
	if rep.fit != nil && rep.src != nil {
		out.Fit = fitJSON(rep.fit, rep.src.Params)
	}
	if rep.moe != nil {
		f := fitJSON(rep.moe, rep.moeParams)
		out.MoE = map[string]any{"values": f.Values, "pd_rms": f.PDRMS, "objective": f.Objective}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// fitJSON names a fit's values by their parameters' catalog keys.
func fitJSON(f *calibrate.Fitted, params []calibrate.Param) *calibFitJSON {
	out := &calibFitJSON{Values: map[string]float64{}, Objective: f.Objective, StartObjective: f.StartObjective,
		Evals: f.Evals, ServingRMS: f.ServingRMS, StepRMS: f.StepRMS, PDRMS: f.PDRMS}
	for i, p := range params {
		if i < len(f.Values) {
			out.Values[p.Name] = f.Values[i]
		}
	}
	return out
}
