package calibrate

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stage is one load stage of a measured experiment: a row of
// measured-stages.csv joined with its experiment's profile. Times are s.
type Stage struct {
	Experiment, Model, Profile string
	TP, Index, OutputLen       int
	Date                       string // YYYY-MM-DD, from the experiment id
	Rate, DurationS            float64
	NSuccess, NFail            int
	TTFTMean, TTFTP99          float64
	E2EMean, E2EP99            float64
	TPOTChunk                  float64 // the CSV's tpot, per streamed chunk (unused)
}

// PerToken is the decode time per output token implied by the means:
// (E2E − TTFT)/(output − 1). The measured tpot column is per streamed chunk.
func (s Stage) PerToken() float64 {
	return (s.E2EMean - s.TTFTMean) / float64(s.OutputLen-1)
}

// Overloaded reports whether the measured client failed more than 10% of
// the stage's requests: its latency figures then cover only the survivors
// and are not like for like with a simulation that completes everything.
func (s Stage) Overloaded() bool {
	return float64(s.NFail) > 0.1*float64(s.NSuccess+s.NFail)
}

// Experiment is one measured run: its scenario file and its stages in order.
type Experiment struct {
	Scenario string // path of the scenario that reproduces it
	Stages   []Stage
}

// Model is the catalog model the experiment ran.
func (e Experiment) Model() string { return e.Stages[0].Model }

// ReadMeasured reads dir's measured-experiments.csv and measured-stages.csv
// and returns the experiments in file order, each with its scenario
// calib-<model>-tp<N>-<profile>.yaml in dir. Errors name the file and line.
func ReadMeasured(dir string) ([]Experiment, error) {
	exps, err := readCSV(filepath.Join(dir, "measured-experiments.csv"))
	if err != nil {
		return nil, err
	}
	profiles := map[string]map[string]string{}
	for _, e := range exps {
		profiles[e["experiment"]] = e
	}
	file := filepath.Join(dir, "measured-stages.csv")
	rows, err := readCSV(file)
	if err != nil {
		return nil, err
	}
	var out []Experiment
	for i, r := range rows {
		s, err := parseStage(r, profiles[r["experiment"]])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, i+2, err)
		}
		if n := len(out); n > 0 && out[n-1].Stages[0].Experiment == s.Experiment {
			out[n-1].Stages = append(out[n-1].Stages, s)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("calib-%s-tp%d-%s.yaml", s.Model, s.TP, s.Profile))
		out = append(out, Experiment{Scenario: path, Stages: []Stage{s}})
	}
	return out, nil
}

// catalogModel maps a measured run's Hugging Face model name to the
// catalog's; "" if unknown.
func catalogModel(hf string) string {
	switch hf {
	case "meta-llama/Llama-2-7b-hf":
		return "llama-2-7b"
	case "meta-llama/Llama-2-70b-hf":
		return "llama-2-70b"
	case "mistralai/Mixtral-8x7B-v0.1":
		return "mixtral-8x7b"
	case "codellama/CodeLlama-34b-Instruct-hf":
		return "codellama-34b"
	}
	return ""
}

func parseStage(r, exp map[string]string) (Stage, error) {
	if exp == nil {
		return Stage{}, fmt.Errorf("experiment %q not in measured-experiments.csv", r["experiment"])
	}
	id := r["experiment"]
	s := Stage{Experiment: id, Model: catalogModel(r["model"]), Profile: id[strings.LastIndex(id, "-")+1:], Date: idDate(id)}
	ints := map[string]*int{"tp": &s.TP, "stage": &s.Index, "n_success": &s.NSuccess, "n_fail": &s.NFail}
	floats := map[string]*float64{"rate_rps": &s.Rate, "duration_s": &s.DurationS, "ttft_mean_s": &s.TTFTMean,
		"ttft_p99_s": &s.TTFTP99, "e2e_mean_s": &s.E2EMean, "e2e_p99_s": &s.E2EP99, "tpot_mean_s": &s.TPOTChunk}
	for k, p := range ints {
		v, err := strconv.Atoi(r[k])
		if err != nil {
			return s, fmt.Errorf("%s: %v", k, err)
		}
		*p = v
	}
	for k, p := range floats {
		v, err := strconv.ParseFloat(r[k], 64)
		if err != nil {
			return s, fmt.Errorf("%s: %v", k, err)
		}
		*p = v
	}
	out, err := strconv.Atoi(exp["output_len"])
	if err != nil || out < 2 || s.Model == "" {
		return s, fmt.Errorf("experiment %s: bad output_len or unknown model %q", id, r["model"])
	}
	s.OutputLen = out
	return s, nil
}

// idDate returns the YYYY-MM-DD an experiment id starts with
// (20260217-155451-...), or "" when it does not start with a date.
func idDate(id string) string {
	if len(id) < 8 {
		return ""
	}
	if _, err := strconv.Atoi(id[:8]); err != nil {
		return ""
	}
	return id[:4] + "-" + id[4:6] + "-" + id[6:8]
}

// readCSV reads a CSV file with a header into maps keyed by column.
func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out, nil
}
