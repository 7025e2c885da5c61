package sim

import (
	"testing"

	"handoff/results"
)

// The decode leg's relay, in closed form (the timer and link of
// closedform_test.go): relayConfig is pdConfig's one prefiller and one
// decoder behind serving costs —
//
//	the cluster's front end        7000 + 2·prompt ns (HTTP, tokenize)
//	the prefiller's response       final emit 3000 ns (first 1500)
//	the P/D proxy's calls          4000 ns
//	the decoder's front end        6000 + 3·prompt ns (it tokenizes again)
//	the decoder's first token      emit 1500 ns
//
// so a 100-token prompt's decode leg reaches the decoder's engine 3000 +
// 4000 + 6300 = 13 300 ns after its prefill ends.
const (
	relayInNs   = 7000 + 2*100
	relayLegNs  = 3000 + 4000 + 6000 + 3*100
	relayEmitNs = 1500
)

func relayConfig(t *testing.T, reqs []Request) *Config {
	cfg := pdConfig(t, reqs)
	cfg.Frontend = Frontend{LatencyNs: 7000, TokenizeNsPerToken: 2}
	cfg.ProxyNs = 4000
	p, d := &cfg.Instances[0], &cfg.Instances[1]
	p.FirstEmitNs, p.FinalEmitNs = 1500, 3000
	d.Frontend = Frontend{LatencyNs: 6000, TokenizeNsPerToken: 3}
	d.FirstEmitNs, d.FinalEmitNs = relayEmitNs, 2500
	return cfg
}

// TestPDRelayClosedForm: one P/D request alone pays every piece of its
// way in turn — the front end, the prefill step (1000 + 10·100), the
// decode leg to the decoder's engine, the pull (5000 + ⌈100 000/3⌉), the
// decoder's first step (it recomputes the prompt's last token: 1010) and
// the first token's emission — and the front end's time holds the serving
// layers' part of it, the prefiller holding the KV all the while.
func TestPDRelayClosedForm(t *testing.T) {
	const arrivalNs = 1000
	cfg := relayConfig(t, []Request{{ArrivalNs: arrivalNs, PromptTokens: 100, OutputTokens: 5}})
	w := &blockWatch{inst: 0}
	c, err := drive(t, cfg, 1, w.hook)
	if err != nil {
		t.Fatal(err)
	}
	r := c.recs.all[0]
	checkAttribution(t, &r)
	const prefillNs, pullNs = 2000, 5000 + 33334
	const ttftNs = relayInNs + prefillNs + relayLegNs + pullNs + cfDecodeNs + relayEmitNs
	if got := r.FirstTokenNs - arrivalNs; r.Status != results.Completed || got != ttftNs {
		t.Errorf("TTFT %d ns (%v), want %d", got, r.Status, ttftNs)
	}
	want := map[int]int64{results.TFrontend: relayInNs + relayLegNs + relayEmitNs, results.TPrefillCompute: prefillNs,
		results.TTransfer: pullNs, results.TDecodeFirst: cfDecodeNs}
	for k, ns := range want {
		if r.Time[k] != ns {
			t.Errorf("%s %d ns, want %d", results.TimeNames[k], r.Time[k], ns)
		}
	}
	// The prefiller's 7 blocks are taken from the prefill until the pull ends.
	if at := w.freedAt(0); at != arrivalNs+relayInNs+prefillNs+relayLegNs+pullNs {
		t.Errorf("prefiller's KV freed at %d ns, want at the pull's end %d", at, arrivalNs+relayInNs+prefillNs+relayLegNs+pullNs)
	}
}

// TestKVLandingMidStepWaitsForBoundary: A decodes alone on the decoder
// from 40 334 ns, a step every 1010 ns (boundaries at 41 344 + 1010·j).
// B, arriving at 40 000, is prefilled 40 000–42 000, and its decode
// request reaches the decoder during the step 41 344–42 354.
//
// Without asynchronous scheduling the decoder's next pass (42 354)
// reserves B's blocks and starts its pull; the KV lands at 80 688 (+ 38
// 334), 46 ns before the end of the step 79 724–80 734, and the pass at
// that step's end takes B: a step of A and B's recomputed last prompt
// token (1000 + 10·2 = 1020), first token at 81 754.
//
// With it, the pass at 42 354 was planned when that step began, before
// B's request came: the pass at 43 364 reserves, the KV lands at 81 698,
// 46 ns before the end of 80 734–81 744, and since the pass at 81 744 was
// planned at 80 734, B joins the step after it, 82 754–83 774. (vLLM
// reports finished_recving at the end of a step's execute_model and
// promotes the request at the next schedule(), which asynchronous
// scheduling has already run for the step after.)
func TestKVLandingMidStepWaitsForBoundary(t *testing.T) {
	for _, tc := range []struct {
		async           bool
		landNs, firstNs int64
	}{{false, 80_688, 80_734 + 1020}, {true, 81_698, 81_744 + cfDecodeNs + 1020}} {
		cfg := pdConfig(t, []Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 1000},
			{ArrivalNs: 40_000, PromptTokens: 100, OutputTokens: 3}})
		cfg.Instances[1].Engine.AsyncScheduling = tc.async
		res := mustRun(t, cfg)
		a, b := res.Records[0], res.Records[1]
		if a.FirstTokenNs != 40_334+cfDecodeNs || b.Status != results.Completed || b.FirstTokenNs != tc.firstNs {
			t.Errorf("async %v: A's first token at %d ns, B's at %d (%v); want %d and %d", tc.async,
				a.FirstTokenNs, b.FirstTokenNs, b.Status, 40_334+cfDecodeNs, tc.firstNs)
		}
		// From its prefill's end: the wait for the reservation, the pull,
		// then the wait for the step boundary and B's step.
		if got, want := b.Time[results.TTransfer], int64(38_334); got != want {
			t.Errorf("async %v: B's pull took %d ns, want %d", tc.async, got, want)
		}
		if got, want := b.Time[results.TDecodeFirst], (tc.landNs-38_334-42_000)+(tc.firstNs-tc.landNs); got != want {
			t.Errorf("async %v: B waited %d ns on the decoder, want %d", tc.async, got, want)
		}
	}
}

// TestRelayFaults: what happens to a request on its decode leg (prefill
// ends at 3000 + 7200 = 10 200 ns, the leg reaches the decoder at 23 500).
// A client that gives up meanwhile (first-token timeout at 15 000) frees
// the prefiller's KV then; a prefiller that crashes meanwhile (at 15 000)
// loses it, and the decoder, told when it starts the pull, prefills the
// prompt itself (recompute: 2000 ns); a decoder that crashes meanwhile
// sends it round again (prefill 15 000–17 000, its leg, the pull, the
// first step); a hold that runs out meanwhile (5 µs after the prefill)
// frees the KV unread, and the pull reads it all the same.
func TestRelayFaults(t *testing.T) {
	const prefillEndNs = 1000 + relayInNs + 2000
	const legEndNs = prefillEndNs + relayLegNs
	for _, tc := range []struct {
		name      string
		set       func(cfg *Config)
		status    results.Status
		firstNs   int64 // 0: none
		failovers uint8
		expired   uint8
		freedNs   int64 // the prefiller's KV back in its pool (blockWatch)
	}{
		{"client gives up", func(cfg *Config) { cfg.Client.FirstTokenTimeoutNs = 14_000 }, results.Abandoned, 0, 0, 0, 15_000},
		{"prefiller crashes", func(cfg *Config) {
			cfg.Instances[1].RecomputeLoadFailures = true
			cfg.Faults = []Fault{{Kind: FaultCrash, Instance: 0, AtNs: 15_000}}
		}, results.Completed, legEndNs + 2000 + relayEmitNs, 0, 0, 15_000},
		{"decoder crashes", func(cfg *Config) { cfg.Faults = []Fault{{Kind: FaultCrash, Instance: 1, AtNs: 15_000}} },
			results.Completed, 15_000 + 2000 + relayLegNs + 38_334 + cfDecodeNs + relayEmitNs, 1, 0, -1},
		{"hold runs out", func(cfg *Config) { cfg.Instances[0].KVHold = KVHold{TimeoutNs: 5000} },
			results.Completed, legEndNs + 38_334 + cfDecodeNs + relayEmitNs, 0, 1, prefillEndNs + 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := relayConfig(t, []Request{{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5}})
			tc.set(cfg)
			w := &blockWatch{inst: 0}
			c, err := drive(t, cfg, 1, w.hook)
			if err != nil {
				t.Fatal(err)
			}
			checkConservation(t, c.recs.all, 1)
			checkDrained(t, c)
			r := c.recs.all[0]
			checkAttribution(t, &r)
			if r.Status != tc.status || r.FirstTokenNs != tc.firstNs || r.Failovers != tc.failovers || r.ExpiredKVReads != tc.expired {
				t.Errorf("%+v, want %v, first token at %d ns, %d fail-overs, %d expired reads", r, tc.status, tc.firstNs,
					tc.failovers, tc.expired)
			}
			if at := w.freedAt(0); tc.freedNs >= 0 && at != tc.freedNs {
				t.Errorf("prefiller's KV freed at %d ns (changes %v at %v), want %d", at, w.counts, w.at, tc.freedNs)
			}
		})
	}
}
