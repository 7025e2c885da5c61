package calibrate

import (
	"fmt"
	"slices"

	"handoff/results"
	"handoff/scenarios"
)

// PDRow is one measured P/D run and its simulation. Times are s. The
// figures are computed as vllm bench serve computes them: TTFT per
// request; TPOT per request, (E2E − TTFT)/(output − 1); ITL over all
// gaps of all requests pooled (one token per streamed chunk, so its mean
// is Σ(E2E − TTFT)/Σ(output − 1)); throughputs over the duration from
// the first send to the last completion.
type PDRow struct {
	Measured                      PDRun
	Completed, Total              int // simulated requests completed / sent
	TTFTMean, TTFTMedian, TTFTP99 float64
	TPOTMean, TPOTMedian, TPOTP99 float64
	ITLMean, E2EMean              float64
	OutputTPS, RequestRPS         float64
	DurationS                     float64
}

// PDResult is one configuration's simulated runs.
type PDResult struct {
	Config   string
	Rows     []PDRow
	Unserved error // the first run's unserved-requests error; nil if none
}

// PDSets are the overrides that make a P/D scenario run r: its closed-loop
// client's concurrency and request count, and the source's request count.
func PDSets(r PDRun) ([]scenarios.Set, error) {
	n := r.NumPrompts
	var out []scenarios.Set
	for _, s := range []string{
		fmt.Sprintf("workload.client.concurrency=%d", r.Concurrency),
		fmt.Sprintf("workload.client.requests=%d", n),
		fmt.Sprintf("workload.synthetic.requests=%d", n),
	} {
		set, err := scenarios.ParseSet(s)
		if err != nil {
			return nil, err
		}
		out = append(out, set)
	}
	return out, nil
}

// RunPD simulates every run of every configuration with opts (opts.Sets
// first, then the run's PDSets) and returns the results in cfgs' order.
// Runs go on up to opts.Workers goroutines; each result depends only on
// its run. The first error, in run order, is returned.
func RunPD(cfgs []PDConfig, opts Options) ([]PDResult, error) {
	type job struct{ cfg, run int }
	var jobs []job
	out := make([]PDResult, len(cfgs))
	for i, c := range cfgs {
		out[i] = PDResult{Config: c.Config, Rows: make([]PDRow, len(c.Runs))}
		for j := range c.Runs {
			jobs = append(jobs, job{i, j})
		}
	}
	unserved := make([]error, len(jobs))
	err := runParallel(len(jobs), opts.Workers, func(k int) error {
		j := jobs[k]
		row, uns, err := runPD(cfgs[j.cfg].Scenario, cfgs[j.cfg].Runs[j.run], opts)
		out[j.cfg].Rows[j.run], unserved[k] = row, uns
		return err
	})
	if err != nil {
		return nil, err
	}
	for k, j := range jobs {
		if out[j.cfg].Unserved == nil {
			out[j.cfg].Unserved = unserved[k]
		}
	}
	return out, nil
}

// runPD loads the scenario for one run, simulates it and summarises it.
func runPD(path string, r PDRun, opts Options) (PDRow, error, error) {
	sets, err := PDSets(r)
	if err != nil {
		return PDRow{}, nil, err
	}
	l, err := scenarios.Load(path, append(slices.Clone(opts.Sets), sets...)...)
	if err != nil {
		return PDRow{}, nil, err
	}
	opts.applyHardware(l)
	simulate := opts.Simulate
	if simulate == nil {
		simulate = Simulate
	}
	recs, err := simulate(l)
	if err != nil {
		return PDRow{}, nil, err
	}
	return pdRow(r, recs), results.Unserved(recs, l.File), nil
}

// pdRow computes a run's figures from its records, over completed requests.
func pdRow(m PDRun, recs []results.Record) PDRow {
	row := PDRow{Measured: m, Total: len(recs)}
	var ttft, tpot []float64
	var gapNs, gaps, outTokens float64
	first, last := int64(-1), int64(0)
	for i := range recs {
		r := &recs[i]
		if first < 0 || r.ArrivalNs < first {
			first = r.ArrivalNs
		}
		if r.Status != results.Completed {
			continue
		}
		row.Completed++
		last = max(last, r.FinishNs)
		ttft = append(ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e9)
		outTokens += float64(r.OutputTokens)
		if r.OutputTokens > 1 {
			d := float64(r.FinishNs - r.FirstTokenNs)
			tpot = append(tpot, d/1e9/float64(r.OutputTokens-1))
			gapNs += d
			gaps += float64(r.OutputTokens - 1)
		}
	}
	row.TTFTMean, row.TTFTMedian, row.TTFTP99 = meanMedianP99(ttft)
	row.TPOTMean, row.TPOTMedian, row.TPOTP99 = meanMedianP99(tpot)
	if gaps > 0 {
		row.ITLMean = gapNs / 1e9 / gaps
	}
	row.E2EMean = row.TTFTMean + float64(PDOutputLen-1)*row.TPOTMean
	if row.Completed > 0 && last > first {
		row.DurationS = float64(last-first) / 1e9
		row.OutputTPS = outTokens / row.DurationS
		row.RequestRPS = float64(row.Completed) / row.DurationS
	}
	return row
}

func meanMedianP99(xs []float64) (mean, median, p99 float64) {
	mean, p99 = meanP99(xs)
	return mean, results.Quantile(xs, 0.5), p99
}

// PDRows flattens results into their runs, in order.
func PDRows(res []PDResult) []PDRow {
	var out []PDRow
	for _, r := range res {
		out = append(out, r.Rows...)
	}
	return out
}
