package sim

import (
	"math/rand/v2"
	"strings"
	"testing"

	"handoff/models/router"
	"handoff/results"
)

// burst is n requests arriving gapNs apart with prompt and output lengths
// drawn uniformly from [1, maxPrompt] and [1, maxOut].
func burst(rng *rand.Rand, n int, gapNs int64, maxPrompt, maxOut int) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ArrivalNs: int64(i) * gapNs, PromptTokens: 1 + rng.IntN(maxPrompt),
			OutputTokens: 1 + rng.IntN(maxOut)}
	}
	return reqs
}

// pdCluster is np prefill and nd decode instances, each prefiller with
// pBlocks KV blocks and each decoder with dBlocks, budget 256 tokens and 8
// sequences, joined by cfLink.
func pdCluster(t *testing.T, np, nd, pBlocks, dBlocks int, reqs []Request) *Config {
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, np, engineCfg(t, pBlocks, 256, 8, false), timer),
		instances(RoleDecode, nd, engineCfg(t, dBlocks, 256, 8, false), timer)...)
	cfg := &Config{Name: "pd", Instances: insts, Router: &router.LeastLoaded{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}
	return withNICs(cfg, cfLink)
}

// TestEveryRequestEndsOnceAndInstancesDrain pushes a mixed load through a
// P/D cluster whose decoders hold 40·16 = 640 tokens: prompts up to 700
// tokens make some requests too long, and the rest complete. Blocks are
// audited after every event; at the end everything is idle and empty.
func TestEveryRequestEndsOnceAndInstancesDrain(t *testing.T) {
	reqs := burst(rand.New(rand.NewPCG(1, 1)), 200, 3000, 700, 64)
	c, err := drive(t, pdCluster(t, 2, 3, 60, 40, reqs), 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, len(reqs))
	checkDrained(t, c)
	var counts [3]int
	for _, r := range c.recs.all {
		counts[r.Status]++
	}
	if counts[results.Completed] == 0 || counts[results.Dropped] == 0 {
		t.Errorf("statuses %v: want both completed and dropped requests", counts)
	}
	// drive mirrors Run: the public entry point must agree with it.
	res := mustRun(t, pdCluster(t, 2, 3, 60, 40, reqs))
	for i := range res.Records {
		if res.Records[i] != c.recs.all[i] {
			t.Fatalf("record %d: Run %+v, drive %+v", i, res.Records[i], c.recs.all[i])
		}
	}
}

// TestTooLongRequestIsDroppedWithSizes: a request needing more tokens than
// any instance holds is dropped on arrival, and the reason names the sizes.
func TestTooLongRequestIsDroppedWithSizes(t *testing.T) {
	tests := []struct {
		name    string
		cfg     func(reqs []Request) *Config
		mention []string
	}{
		// One colocated instance of 10·16 = 160 tokens; 150 + 20 = 170.
		{"colocated", func(reqs []Request) *Config {
			cfg := colocatedConfig(t, 256, reqs)
			cfg.Instances[0].Engine.NumBlocks = 10
			return cfg
		}, []string{"170", "150", "20", "160"}},
		// The prefiller could hold it; the only decoder (160 tokens) cannot.
		{"pd", func(reqs []Request) *Config { return pdCluster(t, 1, 1, 100, 10, reqs) },
			[]string{"170", "160"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reqs := []Request{
				{ArrivalNs: 10, PromptTokens: 150, OutputTokens: 20},
				{ArrivalNs: 20, PromptTokens: 100, OutputTokens: 20},
			}
			c, err := drive(t, tc.cfg(reqs), 1)
			if err != nil {
				t.Fatal(err)
			}
			checkConservation(t, c.recs.all, 2)
			checkDrained(t, c)
			r := c.recs.all[0]
			if r.Status != results.Dropped || r.FinishNs != 10 || r.FirstTokenNs != 0 || r.OutputTokens != 0 {
				t.Fatalf("record %+v, want dropped at arrival", r)
			}
			for _, m := range tc.mention {
				if !strings.Contains(r.Reason, m) {
					t.Errorf("reason %q does not mention %s", r.Reason, m)
				}
			}
			if c.record(1).Status != results.Completed {
				t.Errorf("the request that fits: %+v", c.recs.all[1])
			}
		})
	}
}

// TestRoutedDecoderTooSmallDrops: with two decoders of different sizes and a
// round-robin router, a request that fits the large decoder but is routed to
// the small one is dropped with both the instance and the sizes named.
func TestRoutedDecoderTooSmallDrops(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 10, PromptTokens: 150, OutputTokens: 20}, // → decode-0 (100 blocks)
		{ArrivalNs: 20, PromptTokens: 150, OutputTokens: 20}, // → decode-1 (10 blocks)
	}
	cfg := pdCluster(t, 1, 2, 100, 100, reqs)
	cfg.Instances[2].Engine.NumBlocks = 10
	cfg.Router = &router.RoundRobin{}
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, 2)
	checkDrained(t, c)
	if c.record(0).Status != results.Completed {
		t.Errorf("first request: %+v", c.recs.all[0])
	}
	r := c.recs.all[1]
	if r.Status != results.Dropped || !strings.Contains(r.Reason, "decode-1") ||
		!strings.Contains(r.Reason, "170") || !strings.Contains(r.Reason, "160") {
		t.Errorf("second request: %+v, want dropped naming decode-1, 170 and 160", r)
	}
}

// TestDecoderPreemptsUnderMemoryPressure: eight requests of prompt 32 and
// output 200 (232 tokens, 15 blocks each at the end) land on one decoder of
// 24 blocks. Each reserves 2 blocks for its prompt, so all are admitted, then
// their growth runs the pool dry and the decoder preempts by recomputation.
// Every request must still complete with all its tokens.
func TestDecoderPreemptsUnderMemoryPressure(t *testing.T) {
	var reqs []Request
	for i := range 8 {
		reqs = append(reqs, Request{ArrivalNs: int64(i) * 100, PromptTokens: 32, OutputTokens: 200})
	}
	c, err := drive(t, pdCluster(t, 1, 1, 100, 24, reqs), 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, len(reqs))
	checkDrained(t, c)
	preemptions := 0
	for _, r := range c.recs.all {
		if r.Status != results.Completed || r.OutputTokens != 200 {
			t.Errorf("request %d: %+v", r.ID, r)
		}
		preemptions += int(r.Preemptions)
	}
	s := c.replicas[1].eng.Stats()
	if preemptions == 0 || int64(preemptions) != s.Preemptions {
		t.Errorf("records sum %d preemptions, decoder counted %d; want equal and > 0", preemptions, s.Preemptions)
	}
	if s.ReprefillTokens == 0 || s.PrefillTokens != s.ReprefillTokens {
		t.Errorf("decoder prefill %d tokens, re-prefill %d: all prefill on a decoder is re-prefill",
			s.PrefillTokens, s.ReprefillTokens)
	}
}
