package calibrate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios"
)

// TestReadPDShipped reads the shipped table: 12 configurations of 6
// concurrencies each, in increasing concurrency.
func TestReadPDShipped(t *testing.T) {
	cfgs, err := ReadPD("../calibration")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 12 {
		t.Fatalf("%d configurations, want 12", len(cfgs))
	}
	for _, c := range cfgs {
		if len(c.Runs) != 6 {
			t.Errorf("%s: %d runs, want 6", c.Config, len(c.Runs))
		}
		for i, r := range c.Runs {
			if i > 0 && r.Concurrency <= c.Runs[i-1].Concurrency {
				t.Errorf("%s: c = %d after %d", c.Config, r.Concurrency, c.Runs[i-1].Concurrency)
			}
		}
	}
}

// TestPDE2EMeanByHand checks the derived E2E of the p1tp2-d1tp2 run at
// c = 16 (ttft 0.42048 s, tpot 0.009888 s in the table) by hand:
// 0.42048 + 249 × 0.009888 = 2.882592 s.
func TestPDE2EMeanByHand(t *testing.T) {
	cfgs, err := ReadPD("../calibration")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		for _, r := range c.Runs {
			if c.Config == "h100-p1tp2-d1tp2" && r.Concurrency == 16 {
				if got := r.E2EMean(); math.Abs(got-2.882592) > 1e-6 {
					t.Fatalf("E2E mean %.6f, want 2.882592", got)
				}
				return
			}
		}
	}
	t.Fatal("no h100-p1tp2-d1tp2 run at c = 16")
}

// TestReadPDErrors names the file, line and field of a bad row.
func TestReadPDErrors(t *testing.T) {
	head := "# a comment\nconfig,hardware,placement,mode,prefill_replicas,prefill_tp,decode_replicas,decode_tp,concurrency,num_prompts,ttft_mean_s,ttft_median_s,ttft_p99_s,tpot_mean_s,tpot_median_s,tpot_p99_s,itl_mean_s,output_throughput_tps,request_throughput_rps,duration_s\n"
	good := "x,h100-sxm,pack,pd,1,2,1,2,4,20,0.3,0.2,0.9,0.006,0.006,0.007,0.006,490,1.9,10\n"
	for _, tc := range []struct{ row, want string }{
		{strings.Replace(good, ",0.3,", ",fast,", 1), ":4: field ttft_mean_s: want a positive number, got \"fast\""},
		{strings.Replace(good, ",4,20,", ",4,21,", 1), ":4: field num_prompts: want 5 × concurrency (20), got 21"},
		{strings.Replace(good, ",pd,", ",both,", 1), ":4: field mode"},
		{strings.Replace(good, ",1,2,1,2,", ",1,-2,1,2,", 1), ":4: field prefill_tp"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, PDFile)
		if err := os.WriteFile(file, []byte(head+good+tc.row), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPD(dir)
		if err == nil || !strings.Contains(err.Error(), file+tc.want) {
			t.Errorf("row %q: error %v, want %q", tc.row, err, file+tc.want)
		}
	}
}

// TestPDRowFigures computes a run's figures as vllm bench serve does, on
// three hand-made requests of 3 output tokens.
func TestPDRowFigures(t *testing.T) {
	s := int64(1e9)
	recs := []results.Record{
		{ArrivalNs: 0, FirstTokenNs: s, FinishNs: 3 * s, OutputTokens: 3},          // ttft 1, tpot 1
		{ArrivalNs: 0, FirstTokenNs: 2 * s, FinishNs: 6 * s, OutputTokens: 3},      // ttft 2, tpot 2
		{ArrivalNs: 3 * s, FirstTokenNs: 7 * s, FinishNs: 10 * s, OutputTokens: 3}, // ttft 4, tpot 1.5
	}
	r := pdRow(PDRun{}, recs)
	want := map[string][2]float64{
		"ttft mean": {r.TTFTMean, 7.0 / 3}, "ttft median": {r.TTFTMedian, 2}, "tpot mean": {r.TPOTMean, 1.5},
		"tpot median": {r.TPOTMedian, 1.5}, "itl mean": {r.ITLMean, 9.0 / 6}, "duration": {r.DurationS, 10},
		"output tok/s": {r.OutputTPS, 0.9}, "req/s": {r.RequestRPS, 0.3}, "e2e": {r.E2EMean, 7.0/3 + 249*1.5},
	}
	for k, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-9 {
			t.Errorf("%s = %g, want %g", k, v[0], v[1])
		}
	}
	if r.Completed != 3 || r.Total != 3 {
		t.Errorf("completed %d / %d, want 3 / 3", r.Completed, r.Total)
	}
}

// TestPDScenariosLoad loads and builds every P/D scenario at each of its
// runs' concurrencies, with the run's client fields in place.
func TestPDScenariosLoad(t *testing.T) {
	cfgs, err := ReadPD("../calibration")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		for _, r := range c.Runs {
			sets, err := PDSets(r)
			if err != nil {
				t.Fatal(err)
			}
			l, err := scenarios.Load(c.Scenario, sets...)
			if err != nil {
				t.Fatalf("%s c=%d: %v", c.Config, r.Concurrency, err)
			}
			if l.Workload.Client.Concurrency != r.Concurrency || l.Workload.Client.Requests != int64(r.NumPrompts) {
				t.Errorf("%s c=%d: client %+v", c.Config, r.Concurrency, l.Workload.Client)
			}
			b, err := l.Build()
			if err != nil {
				t.Fatalf("%s c=%d: %v", c.Config, r.Concurrency, err)
			}
			b.Close()
		}
	}
}
