package sim

import (
	"testing"

	"handoff/models/autoscale"
	"handoff/models/router"
	"handoff/results"
)

// scripted is a policy that wants counts[k] instances from atNs[k] on
// (and counts[0] before atNs[0]).
type scripted struct {
	atNs   []int64
	counts []int
}

func (s *scripted) Desired(o *autoscale.Observation) int {
	want := s.counts[0]
	for k, at := range s.atNs {
		if o.NowNs >= at {
			want = s.counts[k]
		}
	}
	return want
}

// steadyRequests are n requests every gapNs from 0, of prompt and output
// tokens each.
func steadyRequests(n int, gapNs int64, prompt, output int) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ArrivalNs: int64(i) * gapNs, PromptTokens: prompt, OutputTokens: output}
	}
	return reqs
}

// fleetConfig is a pool of three colocated instances (1 ms + 10 µs/token
// steps), one ready at the start, scaled by policy every 10 ms with the
// given provisioning and load times, under a round-robin router.
func fleetConfig(t *testing.T, policy autoscale.Policy, provisionNs, loadNs int64, reqs []Request) *Config {
	ec := engineCfg(t, 200, 4096, 8, false)
	return &Config{Name: "fleet", Instances: instances(RoleColocated, 3, ec, linearTimer(1e6, 1e4)),
		Router: &router.RoundRobin{}, Source: &sliceSource{reqs: reqs},
		Scaling: []PoolScaling{{Pool: "colocated", Initial: 1, Min: 1, Max: 3, IntervalNs: 10e6,
			ProvisionNs: provisionNs, LoadNs: loadNs, Policy: policy}}}
}

// TestScaleUpReadyAfterProvisionAndLoad: the policy asks for 2 instances
// at its decision at 10 ms; the second instance is requested then and
// ready at 10 + 5 (provisioning) + 3 (load) = 18 ms, billed from 10 ms,
// and sent nothing before it is ready.
func TestScaleUpReadyAfterProvisionAndLoad(t *testing.T) {
	pol := &scripted{atNs: []int64{0, 10e6}, counts: []int{1, 2}}
	res := mustRun(t, fleetConfig(t, pol, 5e6, 3e6, steadyRequests(60, 1e6, 20, 4)))
	if len(res.ScaleUpsNs) != 1 || res.ScaleUpsNs[0] != 8e6 {
		t.Fatalf("scale-ups %v, want one of 8 ms", res.ScaleUpsNs)
	}
	pts := res.Fleet[0].Points
	want := []FleetPoint{{AtNs: 0, Ready: 1}, {AtNs: 10e6, Ready: 1, Requested: 1}, {AtNs: 18e6, Ready: 2}}
	if len(pts) != len(want) {
		t.Fatalf("points %+v, want %+v", pts, want)
	}
	for k := range want {
		if pts[k] != want[k] {
			t.Fatalf("points %+v, want %+v", pts, want)
		}
	}
	if b := res.Instances[1].BilledNs; b != res.SimTimeNs-10e6 {
		t.Errorf("instance 1 billed %d ns, want from 10 ms to the end (%d)", b, res.SimTimeNs-10e6)
	}
	if b := res.Instances[2].BilledNs; b != 0 {
		t.Errorf("instance 2 billed %d ns, never requested", b)
	}
	got := 0
	for _, r := range res.Records {
		if r.Status != results.Completed {
			t.Fatalf("request %d ended %v", r.ID, r.Status)
		}
		if r.PrefillInstance == 1 {
			got++
			if r.ArrivalNs < 18e6 {
				t.Errorf("request %d arrived at %d ns went to instance 1 before it was ready", r.ID, r.ArrivalNs)
			}
		}
	}
	if got == 0 {
		t.Error("the new instance served nothing")
	}
}

// TestDrainFinishesWorkAndTakesNoMore: two instances ready; at 20 ms the
// policy wants one, so the newer drains: from then on it is sent nothing,
// it finishes what it holds, and it goes off (billing stops) once empty.
func TestDrainFinishesWorkAndTakesNoMore(t *testing.T) {
	pol := &scripted{atNs: []int64{0, 20e6}, counts: []int{2, 1}}
	cfg := fleetConfig(t, pol, 0, 0, steadyRequests(80, 5e5, 40, 30))
	cfg.Scaling[0].Initial = 2
	drainedAt, maxOut, sawDraining := int64(-1), -1, false
	c, err := drive(t, cfg, 50, func(c *cluster, atNs int64) {
		rp := &c.replicas[1]
		switch {
		case rp.life == lifeDraining:
			if sawDraining && rp.outstanding > maxOut {
				t.Fatalf("t=%d: draining instance took work: %d outstanding after %d", atNs, rp.outstanding, maxOut)
			}
			sawDraining, maxOut = true, rp.outstanding
		case sawDraining && drainedAt < 0:
			drainedAt = c.nowNs
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res := c.result()
	checkConservation(t, res.Records, 80)
	if !sawDraining || maxOut <= 0 || drainedAt < 20e6 {
		t.Fatalf("drain not seen with work: saw %v, outstanding %d, off at %d", sawDraining, maxOut, drainedAt)
	}
	if b := res.Instances[1].BilledNs; b != drainedAt {
		t.Errorf("instance 1 billed %d ns, want until it went off at %d", b, drainedAt)
	}
	for _, r := range res.Records {
		if r.PrefillInstance == 1 && r.ArrivalNs > 20e6 {
			t.Errorf("request %d arrived at %d ns went to the draining instance", r.ID, r.ArrivalNs)
		}
	}
}

// TestCrashFailsOverExactlyItsRequests crashes one of two colocated
// instances at 7 ms: exactly the requests it held then fail over (once
// each), every request still completes once, and the fixed pool's
// replacement is ready 2 ms later.
func TestCrashFailsOverExactlyItsRequests(t *testing.T) {
	ec := engineCfg(t, 200, 4096, 8, false)
	cfg := &Config{Name: "crash", Instances: instances(RoleColocated, 2, ec, linearTimer(1e6, 1e4)),
		Router: &router.RoundRobin{}, Source: &sliceSource{reqs: steadyRequests(40, 5e5, 30, 20)},
		Scaling: []PoolScaling{{Pool: "colocated", Initial: 2, Min: 2, Max: 2, ProvisionNs: 1.5e6, LoadNs: 5e5}},
		Faults:  []Fault{{Kind: FaultCrash, Instance: 0, AtNs: 7e6}}}
	held := map[int64]bool{}
	c, err := drive(t, cfg, 50, func(c *cluster, atNs int64) {
		if atNs <= 7e6 && c.fleet.crashes[0] == 0 { // the last time: just before the crash
			clear(held)
			for _, f := range c.flights.all() {
				if c.hit(f, 0) {
					held[f.req.ID] = true
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res := c.result()
	checkConservation(t, res.Records, 40)
	if len(held) == 0 {
		t.Fatal("the crashed instance held nothing: the test proves nothing")
	}
	for _, r := range res.Records {
		if r.Status != results.Completed {
			t.Errorf("request %d ended %v: %s", r.ID, r.Status, r.Reason)
		}
		if want := int32(0); held[r.ID] {
			want = 1
			if r.Failovers != uint8(want) || r.FailoverUs <= 0 {
				t.Errorf("request %d: %d fail-overs stalling %d µs, want 1 and a stall", r.ID, r.Failovers, r.FailoverUs)
			}
		} else if r.Failovers != 0 {
			t.Errorf("request %d failed over but was not on the crashed instance", r.ID)
		}
	}
	if res.Instances[0].FailedOver != int64(len(held)) || res.Instances[0].Crashes != 1 {
		t.Errorf("instance 0: %d failed over, %d crashes; want %d and 1", res.Instances[0].FailedOver,
			res.Instances[0].Crashes, len(held))
	}
	if len(res.ScaleUpsNs) != 1 || res.ScaleUpsNs[0] != 2e6 {
		t.Errorf("replacement scale-ups %v, want one of 2 ms", res.ScaleUpsNs)
	}
}

// TestLinkDegradeHalvesTransferRate: a lone 100-token transfer (100 kB
// at 3 bytes/ns, 5 µs latency) takes 5000 + 33334 ns; with the prefiller's
// egress at half its capacity over the whole transfer it takes 5000 +
// 66667 ns, and a window that ends before it starts changes nothing.
func TestLinkDegradeHalvesTransferRate(t *testing.T) {
	run := func(faults []Fault) int64 {
		cfg := pdConfig(t, []Request{{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5}})
		cfg.Faults = faults
		return mustRun(t, cfg).Records[0].Time[results.TTransfer]
	}
	egress := 0 // prefill-0/egress
	if got := run(nil); got != cfLatencyNs+33334 {
		t.Fatalf("transfer %d ns without a fault, want %d", got, cfLatencyNs+33334)
	}
	if got := run([]Fault{{Kind: FaultLinkDegrade, Link: egress, AtNs: 0, DurationNs: 1e9, Factor: 0.5}}); got != cfLatencyNs+66667 {
		t.Errorf("transfer %d ns on a halved link, want %d", got, cfLatencyNs+66667)
	}
	if got := run([]Fault{{Kind: FaultLinkDegrade, Link: egress, AtNs: 0, DurationNs: 1000, Factor: 0.5}}); got != cfLatencyNs+33334 {
		t.Errorf("transfer %d ns after the window, want %d", got, cfLatencyNs+33334)
	}
	// Down for 10 µs from the start of the transfer (at 3000 ns): it
	// stalls, then goes on at full rate.
	if got := run([]Fault{{Kind: FaultLinkDown, Link: egress, AtNs: 3000, DurationNs: 10000}}); got != cfLatencyNs+33334+10000 {
		t.Errorf("transfer %d ns across a 10 µs outage, want %d", got, cfLatencyNs+33334+10000)
	}
}

// TestStragglerMultipliesStepTime: one colocated instance, a 10-token
// prompt and 3 output tokens arriving at 1 µs: prefill step 1100 ns,
// decode steps 1010 ns. Slowed 3× from 0, every step triples; from 2 µs
// on, the prefill (started at 1 µs) keeps its time and both decode steps
// triple: E2E = 1100 + 2·3030.
func TestStragglerMultipliesStepTime(t *testing.T) {
	run := func(faults []Fault) int64 {
		cfg := colocatedConfig(t, 4096, []Request{{ArrivalNs: 1000, PromptTokens: 10, OutputTokens: 3}})
		cfg.Faults = faults
		r := mustRun(t, cfg).Records[0]
		return r.FinishNs - r.ArrivalNs
	}
	if got := run(nil); got != 1100+2*1010 {
		t.Fatalf("E2E %d ns without a straggler, want %d", got, 1100+2*1010)
	}
	if got := run([]Fault{{Kind: FaultStraggler, Instance: 0, AtNs: 0, DurationNs: 1e9, Factor: 3}}); got != 3*1100+2*3030 {
		t.Errorf("E2E %d ns slowed from the start, want %d", got, 3*1100+2*3030)
	}
	if got := run([]Fault{{Kind: FaultStraggler, Instance: 0, AtNs: 2000, DurationNs: 1e9, Factor: 3}}); got != 1100+2*3030 {
		t.Errorf("E2E %d ns slowed from 2 µs, want %d", got, 1100+2*3030)
	}
}

// TestFleetDeterministic: a scaled, crashing, straggling run gives the
// same result twice.
func TestFleetDeterministic(t *testing.T) {
	mk := func() *Config {
		pol := &scripted{atNs: []int64{0, 10e6, 30e6}, counts: []int{1, 3, 1}}
		cfg := fleetConfig(t, pol, 2e6, 1e6, steadyRequests(120, 4e5, 50, 40))
		cfg.Seed = 7
		cfg.FaultRates = &FaultRates{UntilNs: 40e6, CrashMTBFNs: 30e6, StragglerMTBFNs: 20e6, StragglerNs: 3e6,
			StragglerFactor: 2}
		return cfg
	}
	a, b := mustRun(t, mk()), mustRun(t, mk())
	if d := sameResult(a, b); d != "" {
		t.Fatal(d)
	}
	checkConservation(t, a.Records, 120)
}
