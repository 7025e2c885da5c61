package sim

import (
	"testing"

	"handoff/hardware"
	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// The closed-form tests use one step timer and one link throughout:
//
//	step(n tokens) = 1000 + 10·n ns      (a = 1000, b = 10)
//	decode step    = step(1) = 1010 ns
//	link           = 3 GB/s per direction (3 bytes/ns), latency 5000 ns
//	KV             = 1000 bytes per prompt token
//
// so a transfer of T tokens takes 5000 + ⌈1000·T/3⌉ ns: the network rounds
// the drain time up to a whole nanosecond.
const (
	cfA, cfB       = 1000, 10
	cfDecodeNs     = cfA + cfB
	cfLatencyNs    = 5000
	cfBandwidthBps = 3e9
	cfKVBytes      = 1000
)

var cfLink = hardware.Link{Name: "test-link", BandwidthBps: cfBandwidthBps, LatencyNs: cfLatencyNs}

// colocatedConfig is one colocated instance with the given token budget.
func colocatedConfig(t *testing.T, budget int, reqs []Request) *Config {
	ec := engineCfg(t, 100, budget, 8, false)
	return &Config{Name: "colocated", Instances: instances(RoleColocated, 1, ec, linearTimer(cfA, cfB)),
		Router: &router.LeastLoaded{}, Source: &sliceSource{reqs: reqs}}
}

// pdConfig is one prefill instance (index 0, no prefix cache) and one decode
// instance (index 1, prefix cache on) joined by cfLink.
func pdConfig(t *testing.T, reqs []Request) *Config {
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 4096, 8, false), timer),
		instances(RoleDecode, 1, engineCfg(t, 100, 4096, 8, true), timer)...)
	cfg := &Config{Name: "pd", Instances: insts, Router: &router.LeastLoaded{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}
	return withNICs(cfg, cfLink)
}

func TestSingleRequestClosedForm(t *testing.T) {
	const arrivalNs = 1000
	// P/D, prompt 100: prefill step 1000+10·100 = 2000 ns; transfer
	// 5000 + ⌈100000/3⌉ = 5000 + 33334 ns; first decode step 1010 ns.
	const pdTTFTNs = 2000 + 5000 + 33334 + cfDecodeNs
	tests := []struct {
		name          string
		pd            bool
		budget        int // colocated token budget
		prompt, out   int
		ttftNs, e2eNs int64
	}{
		// One 100-token prefill step, then 4 decode steps.
		{"colocated", false, 4096, 100, 5, 2000, 2000 + 4*cfDecodeNs},
		// Budget 64 chunks the prompt: (1000+640) + (1000+360) = 3000 ns.
		{"colocated chunked", false, 64, 100, 5, 3000, 3000 + 4*cfDecodeNs},
		{"colocated one token", false, 4096, 100, 1, 2000, 2000},
		{"pd", true, 0, 100, 5, pdTTFTNs, pdTTFTNs + 4*cfDecodeNs},
		{"pd one token", true, 0, 100, 1, pdTTFTNs, pdTTFTNs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reqs := []Request{{ArrivalNs: arrivalNs, PromptTokens: tc.prompt, OutputTokens: tc.out}}
			var cfg *Config
			if tc.pd {
				cfg = pdConfig(t, reqs)
			} else {
				cfg = colocatedConfig(t, tc.budget, reqs)
			}
			res := mustRun(t, cfg)
			r := res.Records[0]
			if r.Status != results.Completed || r.OutputTokens != int32(tc.out) {
				t.Fatalf("record %+v, want completed with %d tokens", r, tc.out)
			}
			if got := r.FirstTokenNs - arrivalNs; got != tc.ttftNs {
				t.Errorf("TTFT %d ns, want %d", got, tc.ttftNs)
			}
			if got := r.FinishNs - arrivalNs; got != tc.e2eNs {
				t.Errorf("E2E %d ns, want %d", got, tc.e2eNs)
			}
			if res.SimTimeNs != r.FinishNs {
				t.Errorf("run ended at %d ns, request at %d", res.SimTimeNs, r.FinishNs)
			}
			// Every token after the first is one decode step after the last.
			if n := res.ITL.Count(); n != int64(tc.out-1) || (n > 0 && (res.ITL.Min() != cfDecodeNs || res.ITL.Max() != cfDecodeNs)) {
				t.Errorf("ITL: %d gaps in [%d, %d] ns, want %d of %d", n, res.ITL.Min(), res.ITL.Max(), tc.out-1, cfDecodeNs)
			}
		})
	}
}

// TestPDTransferAndBusyAccounting checks the counters of the single P/D
// request: the prefill instance is busy for its one step, the decoder for its
// five, and the transfer's bytes and drain time land on the prefiller's
// egress and the decoder's ingress only.
func TestPDTransferAndBusyAccounting(t *testing.T) {
	res := mustRun(t, pdConfig(t, []Request{{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5}}))
	if p, d := res.Instances[0].BusyNs, res.Instances[1].BusyNs; p != 2000 || d != 5*cfDecodeNs {
		t.Errorf("busy prefill %d ns, decode %d ns; want 2000 and %d", p, d, 5*cfDecodeNs)
	}
	if s := res.Instances[1].Stats; s.Steps != 5 || s.DecodeTokens != 4 || s.PrefillTokens != 0 {
		t.Errorf("decoder stats %+v, want 5 steps, 4 decode tokens, no prefill", s)
	}
	want := map[string]bool{"prefill-0/egress": true, "decode-0/ingress": true}
	for _, l := range res.Links {
		s := l.Stats
		if !want[l.Name] {
			if s.Transfers != 0 {
				t.Errorf("link %s carried %d transfers", l.Name, s.Transfers)
			}
			continue
		}
		if s.Transfers != 1 || s.Bytes != 100*cfKVBytes || s.BusyNs != 33334 {
			t.Errorf("link %s: %+v, want 1 transfer of 100000 bytes busy 33334 ns", l.Name, s)
		}
	}
}

// TestPDDecoderPrefixHitShortensTransfer sends the same 80-token prompt
// (a 64-token shared prefix, then 16 unique tokens) twice, the second after
// the first has finished. The decoder keeps the first one's prefix blocks
// cached, so the second pulls only the 16 tokens it misses.
func TestPDDecoderPrefixHitShortensTransfer(t *testing.T) {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	reqs := []Request{
		{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 3, Prefix: prefix},
		{ArrivalNs: 100_000, PromptTokens: 80, OutputTokens: 3, Prefix: prefix},
	}
	res := mustRun(t, pdConfig(t, reqs))
	// First: prefill 1000+800; transfer 5000 + ⌈80000/3⌉ = 5000 + 26667;
	// first decode 1010; then 2 more decode steps.
	// Second: same prefill (the prefiller has no cache); transfer of 16
	// tokens 5000 + ⌈16000/3⌉ = 5000 + 5334; then as before.
	wantTTFT := []int64{1800 + 5000 + 26667 + cfDecodeNs, 1800 + 5000 + 5334 + cfDecodeNs}
	for i, r := range res.Records {
		if r.Status != results.Completed {
			t.Fatalf("request %d: %+v", i, r)
		}
		if got := r.FirstTokenNs - r.ArrivalNs; got != wantTTFT[i] {
			t.Errorf("request %d: TTFT %d ns, want %d", i, got, wantTTFT[i])
		}
		if got := r.FinishNs - r.FirstTokenNs; got != 2*cfDecodeNs {
			t.Errorf("request %d: decode time %d ns, want %d", i, got, 2*cfDecodeNs)
		}
	}
	if s := res.Instances[1].Stats; s.PrefixHitTokens != 64 {
		t.Errorf("decoder prefix hits %d tokens, want 64", s.PrefixHitTokens)
	}
	if b := res.Links[3].Stats.Bytes; b != (80+16)*cfKVBytes {
		t.Errorf("decoder ingress carried %v bytes, want %d", b, (80+16)*cfKVBytes)
	}
}

// TestColocatedPrefixHitShortensPrefill is the colocated counterpart: the
// second prompt's first 64 tokens come from the cache, so its prefill step
// computes 16 tokens: 1000 + 160 ns.
func TestColocatedPrefixHitShortensPrefill(t *testing.T) {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	reqs := []Request{
		{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 2, Prefix: prefix},
		{ArrivalNs: 100_000, PromptTokens: 80, OutputTokens: 2, Prefix: prefix},
	}
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Instances[0].Engine.PrefixCaching = true
	res := mustRun(t, cfg)
	for i, want := range []int64{1800, 1160} {
		r := res.Records[i]
		if got := r.FirstTokenNs - r.ArrivalNs; got != want {
			t.Errorf("request %d: TTFT %d ns, want %d", i, got, want)
		}
	}
	if c := res.Records[1].CachedTokens; c != 64 {
		t.Errorf("second request cached %d tokens, want 64", c)
	}
}

// TestPDSharedEgressMaxMinFair: two requests of prompt 100 are prefilled one
// after the other on the one prefill instance (1000–3000 ns, then 3000–5000:
// the second arrives during the first's step) and decode on two decoders
// (round robin). Their pulls share the prefiller's egress:
//
//	3000–5000   pull 0 alone at 3 bytes/ns: 6000 bytes sent, 94 000 left
//	5000–67667  both at 1.5 bytes/ns: pull 0 drains in ⌈94 000/1.5⌉ = 62 667 ns;
//	            pull 1 has sent 94 000.5, 5999.5 left
//	67667–69667 pull 1 alone at 3 bytes/ns: ⌈5999.5/3⌉ = 2000 ns
//
// Each lands 5000 ns (latency) after draining, at 72 667 and 74 667 ns, and
// its decoder emits the first token one 1010 ns step later.
func TestPDSharedEgressMaxMinFair(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5},
		{ArrivalNs: 2000, PromptTokens: 100, OutputTokens: 5},
	}
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 4096, 8, false), timer),
		instances(RoleDecode, 2, engineCfg(t, 100, 4096, 8, false), timer)...)
	cfg := withNICs(&Config{Name: "shared", Instances: insts, Router: &router.RoundRobin{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
	res := mustRun(t, cfg)
	for i, firstNs := range []int64{72667 + cfDecodeNs, 74667 + cfDecodeNs} {
		r := res.Records[i]
		if r.FirstTokenNs != firstNs || r.FinishNs != firstNs+4*cfDecodeNs {
			t.Errorf("request %d: first token at %d, finish at %d ns; want %d and %d",
				i, r.FirstTokenNs, r.FinishNs, firstNs, firstNs+4*cfDecodeNs)
		}
	}
	if r := res.Records; r[0].DecodeInstance == r[1].DecodeInstance {
		t.Errorf("both decodes on instance %d", r[0].DecodeInstance)
	}
	out := res.Links[0] // busy from 3000 to 69667 ns
	if out.Name != "prefill-0/egress" || out.Stats.Transfers != 2 || out.Stats.Bytes != 200_000 || out.Stats.BusyNs != 66667 {
		t.Errorf("%s: %+v, want 2 transfers, 200000 bytes, busy 66667 ns", out.Name, out.Stats)
	}
}
