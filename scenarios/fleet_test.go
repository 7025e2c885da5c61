package scenarios

import (
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim"
)

// fleetDecode replaces base's decode pool with the decoders autoscaled on a schedule and one
// crash: decode-1 is built (max 3), decode-2 waits off for the schedule.
const fleetDecode = `  - name: decode
    role: decode
    count: 2
    hardware: h100-sxm
    autoscale: {policy: schedule, min: 1, max: 3, interval: 100ms, provisioning: 50ms, load_bandwidth: 160GB/s,
                schedule: [{at: 200ms, count: 3}]}
faults:
  events:
    - {kind: crash, instance: decode-0, at: 300ms}
    - {kind: straggler, pool: prefill, at: 100ms, duration: 200ms, factor: 2}
    - {kind: link_degrade, link: decode-1/ingress, at: 0s, duration: 1s, factor: 0.5}
`

func fleetDoc(t *testing.T) string {
	return edit(t, "  - name: decode\n    role: decode\n    count: 2\n    hardware: h100-sxm\n", fleetDecode)
}

// TestAutoscaleAndFaultsBuild: the pool is built at its max, the first
// count ready; load time is the model's weights over the load bandwidth;
// the faults resolve their names; the run ends every request once.
func TestAutoscaleAndFaultsBuild(t *testing.T) {
	_, b, err := parseBuild(t, fleetDoc(t), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := b.Config
	if n := len(cfg.Instances); n != 4 {
		t.Fatalf("%d instances, want 1 prefill + 3 decode", n)
	}
	s := cfg.Scaling[0]
	wantLoad := int64(b.Model.WeightBytesTotal()/160e9*1e9 + 0.5)
	if s.Pool != "decode" || s.Initial != 2 || s.Max != 3 || s.ProvisionNs != 50e6 || s.LoadNs != wantLoad || s.Policy == nil {
		t.Errorf("scaling %+v, want decode 2 of [1, 3], 50 ms + %d ns", s, wantLoad)
	}
	if len(cfg.Faults) != 3 || cfg.Faults[0].Instance != 1 || cfg.Faults[1].Instance != 0 ||
		cfg.Topology.Names[cfg.Faults[2].Link] != "decode-1/ingress" {
		t.Errorf("faults %+v", cfg.Faults)
	}
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ScaleUpsNs) < 2 || res.ScaleUpsNs[0] != 50e6+wantLoad {
		t.Errorf("scale-ups %v, want the first at %d ns", res.ScaleUpsNs, 50e6+wantLoad)
	}
	for _, r := range res.Records {
		if r.Status != results.Completed {
			t.Errorf("request %d ended %v: %s", r.ID, r.Status, r.Reason)
		}
	}
	l, _ := Parse([]byte(fleetDoc(t)), "t.yaml")
	fs := results.SummarizeFleet(res.Records, FleetInfo(l, b, res), cfg.SLO)
	if fs.GPUHours <= 0 || fs.CostUSD <= 0 || fs.Crashes != 1 || fs.ScaleUps != len(res.ScaleUpsNs) ||
		fs.Pools[1].MaxReady != 3 || fs.Lost != 0 || len(fs.AttainmentPerHour) != 1 {
		t.Errorf("fleet summary %+v", fs)
	}
}

func TestFleetBadInput(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"min above max", "min: 1, max: 3", "min: 4, max: 3", "t.yaml:19: field pools[1].autoscale.max: must not be below min 4"},
		{"unknown policy", "policy: schedule", "policy: magic", "field pools[1].autoscale.policy: unknown policy \"magic\""},
		{"negative load bandwidth", "load_bandwidth: 160GB/s", "load_bandwidth: -1GB/s", "t.yaml:19: field pools[1].autoscale.load_bandwidth: bad bandwidth"},
		// The pool is built at its max: a max past the instance limit would
		// exhaust memory before the run.
		{"max beyond the instance limit", "min: 1, max: 3", "min: 1, max: 100000000",
			"t.yaml:19: field pools[1].autoscale.max: the pools build more than 16384 instances (count × dp each, an autoscaled pool at its max; 1 before this one, 100000000 in it)"},
		{"schedule outside bounds", "count: 3}]", "count: 5}]", "field pools[1].autoscale.schedule[0].count: must be within [min 1, max 3]"},
		{"fault before the run", "at: 300ms}", "at: -1s}", "t.yaml:23: field faults.events[0].at: bad duration"},
		{"fault on no instance", "instance: decode-0", "instance: decode-9", "field faults.events[0].instance: no instance \"decode-9\""},
		{"fault on no pool", "pool: prefill", "pool: nope", "field faults.events[1].pool: no pool \"nope\""},
		{"fault on no link", "link: decode-1/ingress", "link: nowhere", "field faults.events[2].link: no link \"nowhere\""},
		{"degrade factor", "factor: 0.5", "factor: 1.5", "field faults.events[2].factor: a degraded link keeps a share in (0, 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := fleetDoc(t)
			if !strings.Contains(doc, tt.old) {
				t.Fatalf("no %q", tt.old)
			}
			_, _, err := parseBuild(t, strings.Replace(doc, tt.old, tt.new, 1), "t.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			checkError(t, err, tt.want)
		})
	}
}

// A fault at or after the end of the workload's arrivals is refused,
// naming the event's at, where that end is known before the run.
func TestFaultOutsideTheRun(t *testing.T) {
	day, err := ReadFile("testdata/servegen-day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crash := func(at string) string {
		return "faults:\n  events:\n    - {kind: crash, pool: decode, at: 10ms}\n    - {kind: crash, pool: decode, at: " + at + "}\n"
	}
	syn := strings.Replace(base, "requests: 10", "duration: 10m", 1)
	for _, tt := range []struct {
		name, doc, file, want string // want "" : accepted
	}{
		{"synthetic requests over rate", base + crash("1s"), "t.yaml",
			"field faults.events[1].at: 1s is outside the run: workload.synthetic's requests at its rate end by 1s"},
		{"within requests over rate", base + crash("999ms"), "t.yaml", ""},
		{"synthetic duration", syn + crash("10m"), "t.yaml", "field faults.events[1].at: 10m is outside the run"},
		{"stretched by rate_scale", strings.Replace(syn, "workload:\n", "workload:\n  rate_scale: 0.5\n", 1) + crash("15m"), "t.yaml", ""},
		{"beyond the stretch", strings.Replace(syn, "workload:\n", "workload:\n  rate_scale: 0.5\n", 1) + crash("20m"), "t.yaml",
			"workload.synthetic.duration's arrivals at rate_scale 0.5 end by 20m"},
		{"a day of servegen", string(day) + crash("24h"), "testdata/day.yaml", "workload.servegen's windows end by 24h"},
		{"within the day", string(day) + crash("86000s"), "testdata/day.yaml", ""},
		{"servegen windows", strings.Replace(string(day), "  servegen:\n", "  servegen:\n    windows: [43200, 43800]\n", 1) +
			crash("20m"), "testdata/day.yaml", "workload.servegen's windows end by 20m"},
		{"a trace is not checked", strings.Replace(base, `  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 10/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}`, "  trace: {format: azure, path: traces/azure-conv.csv}", 1) + crash("1000h"),
			"t.yaml", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, b, err := parseBuild(t, tt.doc, tt.file)
			if b != nil {
				b.Close()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("accepted")
			case tt.want != "":
				checkError(t, err, tt.want)
			}
		})
	}
}

// A schedule's step is a time of the run, as a fault's is: rate_scale
// moves the end of the arrivals, not the step, and a step at or after that
// end (where it is known before the run) is refused as a fault there is.
func TestScheduleOutsideTheRun(t *testing.T) {
	schedule := func(at string) string {
		return edit(t, "    count: 2\n", "    count: 2\n    autoscale: {policy: schedule, min: 1, max: 3, "+
			"schedule: [{at: 10ms, count: 3}, {at: "+at+", count: 1}]}\n")
	}
	stretched := func(doc string) string {
		return strings.Replace(doc, "workload:\n", "workload:\n  rate_scale: 0.5\n", 1)
	}
	for _, tt := range []struct {
		name, doc, want string // want "": accepted
	}{
		{"requests over rate", schedule("1s"),
			"t.yaml:18: field pools[1].autoscale.schedule[1].at: 1s is outside the run: workload.synthetic's requests at its rate end by 1s"},
		{"within requests over rate", schedule("999ms"), ""},
		{"stretched by rate_scale", stretched(schedule("1500ms")), ""},
		{"beyond the stretch", stretched(schedule("2s")),
			"field pools[1].autoscale.schedule[1].at: 2s is outside the run: workload.synthetic's requests at its rate at rate_scale 0.5 end by 2s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseBuild(t, tt.doc, "t.yaml")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("accepted")
			case tt.want != "":
				checkError(t, err, tt.want)
			}
		})
	}
}

// Fault rates draw faults on every instance, and a data-parallel rank's
// are not modelled: a scenario with both is refused at faults.rates, as
// an event naming a rank is at its instance, rather than by the
// simulator's own check (which built and then failed the run).
func TestFaultRatesWithDataParallelRanks(t *testing.T) {
	doc := moeScenario("count: 2, tp: 4, dp: 2, ep: 8") + "faults: {rates: {until: 1s, crash_mtbf: 1s}}\n"
	_, _, err := parseBuild(t, doc, "m.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	checkError(t, err, "m.yaml:14: field faults.rates: draws faults on every instance, and the data-parallel ranks of "+
		"pools[1] (decode, dp 2) have none modelled: give that pool dp 1, or schedule the faults as events")
}
