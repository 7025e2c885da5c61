package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"handoff/scenarios/workload"
)

// The swarm's workload draws: each request source, 20 to 60 requests
// long (a session trace's limit counts sessions), its length
// distributions, the client and the rate scale.

// swarmSources draws each request source a workload may name, by its key
// in the workload section; shape picks one.
var swarmSources = []struct {
	key  string
	draw func(d *swarmDoc, n int)
}{
	{"synthetic", (*swarmDoc).synthetic},
	{"shared_prefix", (*swarmDoc).sharedPrefix},
	{"trace", (*swarmDoc).trace},
	{"servegen", (*swarmDoc).serveGen},
	{"sessions", (*swarmDoc).sessions},
}

// swarmTraceFiles is a sample file of each trace format, relative to the
// scenarios folder; the draw takes the formats from the format registry
// (workload.TraceFormats), so a new format needs a sample here.
var swarmTraceFiles = map[string][]string{
	workload.FormatAzure:    {"traces/azure-conv.csv", "traces/azure-code.csv"},
	workload.FormatMooncake: {"traces/mooncake-conversation.jsonl"},
	workload.FormatBurstGPT: {"workload/testdata/burstgpt-v1-sample.csv", "workload/testdata/burstgpt-v3-sample.csv"},
	workload.FormatSessions: {"testdata/traces/sessions.csv"},
	workload.FormatShareGPT: {"traces/sharegpt-sample.json"},
	workload.FormatCSV:      {"testdata/traces/mapped.csv"},
	workload.FormatJSONL:    {"testdata/traces/mapped.jsonl"},
	workload.FormatOTLP:     {"traces/otlp-sample.jsonl"},
}

// swarmSmallTraces are the sample files short enough to replay whole.
var swarmSmallTraces = map[string]bool{"workload/testdata/burstgpt-v1-sample.csv": true,
	"workload/testdata/burstgpt-v3-sample.csv": true, "testdata/traces/sessions.csv": true,
	"testdata/traces/mapped.csv": true, "testdata/traces/mapped.jsonl": true}

// workload draws the shape's request source, the client and the rate
// scale.
func (d *swarmDoc) workload() {
	rng := d.rng
	n := 20 + rng.IntN(40)
	d.line("workload:")
	for _, s := range swarmSources {
		if s.key == d.source {
			d.tag(s.key)
			s.draw(d, n)
		}
	}
	d.closedLoop = !d.fixedRate && rng.IntN(5) == 0 && !d.split // sessions pace themselves
	d.fixedRate = d.fixedRate || d.closedLoop
	d.client(n)
	d.classes()
	scale := 1.0
	switch {
	case d.fixedRate:
		if rng.IntN(3) == 0 {
			d.line("  rate_scale: 1") // what a saved effective scenario writes
		}
	case rng.IntN(4) > 0:
		scale = []float64{0.5, 1, 2, 5, 20, 100}[rng.IntN(6)]
		d.line("  rate_scale: %g", scale)
	}
	d.rateScale = scale
	d.horizonUs = int64(float64(d.horizonUs) / scale)
	d.spanUs = int64(float64(d.spanUs) / scale)
	d.rateRPS *= scale
	if d.closedLoop {
		d.horizonUs = 0 // a closed loop's arrivals depend on the service
	}
}

// client draws, for some cases but split ones (a run whose client gives
// up does not split), the client's timeouts and, for a closed loop, its
// users, think time and requests.
func (d *swarmDoc) client(n int) {
	rng := d.rng
	var parts []string
	if rng.IntN(4) == 0 && !d.split {
		parts = append(parts, fmt.Sprintf("timeout: %dms", 50+rng.IntN(3000)))
	}
	if rng.IntN(4) == 0 && !d.split {
		parts = append(parts, fmt.Sprintf("first_token_timeout: %dms", 10+rng.IntN(2000)))
	}
	if d.closedLoop {
		d.tag("closed_loop")
		users := 1 + rng.IntN(8)
		parts = append(parts, fmt.Sprintf("concurrency: %d", users))
		if rng.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("think_time: %dms", rng.IntN(200)))
		}
		if rng.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("requests: %d", users+rng.IntN(n)))
		}
	}
	if len(parts) > 0 {
		d.line("  client: {%s}", strings.Join(parts, ", "))
	}
}

// synthetic draws a generated workload: requests, a duration or both, an
// arrival process and the lengths.
func (d *swarmDoc) synthetic(n int) {
	rng := d.rng
	rate := float64(1 + rng.IntN(400))
	d.line("  synthetic:")
	spanUs := int64(float64(n) / rate * 1e6)
	switch rng.IntN(3) {
	case 0:
		d.line("    duration: %dus", spanUs)
	case 1:
		d.line("    requests: %d", n)
		d.line("    duration: %dus", spanUs+int64(rng.IntN(2))*spanUs)
	default:
		d.line("    requests: %d", n)
	}
	d.line("    arrival: %s", d.arrival(rate))
	d.line("    input_tokens: %s", d.length(6000))
	d.line("    output_tokens: %s", d.length(1500))
	d.horizonUs, d.spanUs, d.rateRPS = spanUs, spanUs, rate
}

// arrival draws an arrival process from those the workload knows.
func (d *swarmDoc) arrival(rate float64) string {
	process := pickOf(d.rng, workload.Processes())
	cv := ""
	if process == workload.ProcessGamma {
		cv = fmt.Sprintf(", cv: %.2f", 0.2+3*d.rng.Float64())
	}
	return fmt.Sprintf("{process: %s, rate: %g/s%s}", process, rate, cv)
}

// length draws a length distribution of those the workload knows, with
// lengths up to most.
func (d *swarmDoc) length(most int) string {
	rng := d.rng
	dist := pickOf(rng, workload.Dists())
	switch dist {
	case workload.DistFixed:
		return fmt.Sprintf("{dist: fixed, value: %d}", 1+rng.IntN(most))
	case workload.DistUniform:
		lo := 1 + rng.IntN(most/2)
		return fmt.Sprintf("{dist: uniform, min: %d, max: %d}", lo, lo+rng.IntN(most/2))
	case workload.DistEmpirical:
		var values, weights []string
		for range 1 + rng.IntN(4) {
			values = append(values, fmt.Sprint(1+rng.IntN(most)))
			weights = append(weights, fmt.Sprint(1+rng.IntN(5)))
		}
		if rng.IntN(3) == 0 {
			return fmt.Sprintf("{dist: empirical, values: [%s]}", strings.Join(values, ", "))
		}
		return fmt.Sprintf("{dist: empirical, values: [%s], weights: [%s]}", strings.Join(values, ", "), strings.Join(weights, ", "))
	}
	mean := 1 + rng.IntN(most/2)
	lo := ""
	if rng.IntN(2) == 0 {
		lo = fmt.Sprintf(", min: %d", rng.IntN(mean+1))
	}
	return fmt.Sprintf("{dist: %s, mean: %d, stddev: %d%s, max: %d}", dist, mean, rng.IntN(mean+1), lo, mean+rng.IntN(most-mean+1))
}

// sharedPrefix draws inference-perf's shared-prefix load over one or two
// stages.
func (d *swarmDoc) sharedPrefix(n int) {
	rng := d.rng
	d.line("  shared_prefix: {num_unique_system_prompts: %d, num_users_per_system_prompt: %d, system_prompt_len: %d,",
		1+rng.IntN(4), 1+rng.IntN(4), 16+rng.IntN(600))
	stages := 1 + rng.IntN(2)
	var list []string
	var spanUs int64
	for range stages {
		us := int64(100_000 + rng.IntN(1_000_000))
		list = append(list, fmt.Sprintf("{duration: %dus, rate: %g/s}", us, float64(n/stages)/(float64(us)/1e6)))
		spanUs += us
	}
	d.line("    question_len: %d, output_len: %d, stages: [%s]}", 1+rng.IntN(300), 1+rng.IntN(300), strings.Join(list, ", "))
	d.horizonUs, d.spanUs, d.rateRPS = spanUs, spanUs, float64(n)/(float64(spanUs)/1e6)
}

// trace draws a trace of one of the registered formats, cut to n
// requests (n/4 sessions).
func (d *swarmDoc) trace(n int) {
	rng := d.rng
	// The generic formats twice as often as each other: each draws one
	// of five timestamp units.
	formats := workload.TraceFormats()
	if d.split { // a session trace paces its turns by the run
		formats = slices.DeleteFunc(formats, func(f string) bool { return f == workload.FormatSessions })
	}
	format := pickOf(rng, formats)
	files := swarmTraceFiles[format]
	if len(files) == 0 {
		panic("swarm: no sample file of trace format " + format + " in swarmTraceFiles")
	}
	d.tag("trace_" + format)
	if format == workload.FormatSessions {
		d.fixedRate, n = true, max(1, n/4)
		d.tag("sessions")
	}
	file := pickOf(rng, files)
	limit := fmt.Sprintf(", limit: %d", n)
	if swarmSmallTraces[file] && rng.IntN(2) == 0 {
		limit = "" // the whole file
	}
	d.spanUs, d.rateRPS = 5e6, 10 // unchecked by the loader: a guess for the fleet's times
	d.line("  trace: {format: %s, path: %s%s%s}", format, d.path(file), limit, d.traceOptions(format))
}

// traceOptions draws the fields a trace format takes besides format, path
// and limit: ShareGPT's arrival process; a generic trace's columns (the
// test files' t or at, in, out, and sid and k or ids), its timestamp unit
// (t's seconds read in any unit, at's datetimes as datetime) and prefix
// block size.
func (d *swarmDoc) traceOptions(format string) string {
	rng := d.rng
	switch format {
	case workload.FormatShareGPT:
		rate := float64(1 + rng.IntN(100))
		d.spanUs, d.rateRPS = int64(30/rate*1e6), rate
		return ", arrival: " + d.arrival(rate)
	case workload.FormatCSV, workload.FormatJSONL:
	default:
		return ""
	}
	unit, ts := pickOf(rng, workload.TimestampUnits()), "t"
	if unit == "datetime" {
		ts = "at"
	}
	cols := "timestamp: " + ts + ", input_tokens: in, output_tokens: out"
	extra := ""
	switch rng.IntN(4) {
	case 0:
		cols += ", session: sid"
	case 1:
		cols += ", session: sid, turn: k"
	case 2:
		cols += ", prefix_ids: ids"
		extra = fmt.Sprintf(", block_tokens: %d", pickInt(rng, 8, 16))
	}
	if rng.IntN(3) == 0 {
		cols += ", class: cls"
		d.classCol = true
	}
	d.tag("trace_columns")
	return fmt.Sprintf(", columns: {%s}, timestamp_unit: %s%s", cols, unit, extra)
}

// serveGen draws a ServeGen replay: one client or two, copies, windows
// with traffic, cut to n requests.
func (d *swarmDoc) serveGen(n int) {
	rng := d.rng
	d.line("  servegen:")
	single := rng.IntN(2) == 0
	if single {
		d.line("    path: %s", d.path("traces/servegen-r1/chunk-0"))
	} else {
		d.line("    paths: [%s, %s]", d.path("traces/servegen-r1/chunk-0"), d.path("traces/servegen-r1/chunk-3"))
	}
	windows := 144
	if rng.IntN(2) == 0 { // windows with traffic: chunk-0's, and chunk-3's for some
		list := some(rng, []string{"2400", "3000", "3600"})
		if !single && rng.IntN(2) == 0 {
			list = append(list, some(rng, []string{"6600", "7200"})...)
		}
		d.line("    windows: [%s]", strings.Join(list, ", "))
		windows = len(list)
	}
	if rng.IntN(3) == 0 {
		d.line("    copies: %d", 1+rng.IntN(3))
	}
	d.line("    limit: %d", n)
	d.horizonUs = int64(windows) * 600e6 // the loader reads each window as 600 s long
	d.spanUs, d.rateRPS = int64(math.Min(float64(n)/0.4, 1200)*1e6), 0.4
}

// sessions draws multi-turn conversations: each turn's history, answers
// included, a prefix hit.
func (d *swarmDoc) sessions(n int) {
	rng := d.rng
	d.fixedRate = true
	rate := float64(1 + rng.IntN(100))
	d.line("  sessions:")
	d.line("    sessions: %d", 1+n/4)
	d.line("    arrival: %s", d.arrival(rate))
	d.line("    turns: %s", d.length(6))
	d.line("    input_tokens: %s", d.length(2000))
	d.line("    output_tokens: %s", d.length(400))
	if rng.IntN(4) > 0 {
		d.line("    think_ms: %s", d.length(2000))
	}
	d.line("    system_prompt_tokens: %d", rng.IntN(500))
	d.spanUs, d.rateRPS = int64(float64(1+n/4)/rate*1e6), rate
}

// classes draws, for some cases, two or three traffic classes with their
// shares, priorities and SLOs (an attainment target for some); the classes
// a trace's class column names, c0 and c1, without shares.
func (d *swarmDoc) classes() {
	rng := d.rng
	if rng.IntN(3) > 0 && !d.classCol {
		return
	}
	n := 2 + rng.IntN(2)
	shares := []float64{0.5, 0.5}
	if n == 3 {
		shares = []float64{0.25, 0.25, 0.5}
	}
	d.line("  classes:")
	for i := range n {
		slo := fmt.Sprintf("ttft: %dms, tpot: %dms", 50+rng.IntN(5000), 5+rng.IntN(200))
		if rng.IntN(2) == 0 {
			slo += fmt.Sprintf(", attainment: %g", []float64{0.5, 0.9, 0.99}[rng.IntN(3)])
		}
		share := fmt.Sprintf("share: %g, ", shares[i])
		if d.classCol {
			share = ""
		}
		d.line("    - {name: c%d, %spriority: %d, slo: {%s}}", i, share, rng.IntN(3)-1, slo)
	}
}
