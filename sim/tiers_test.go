package sim

import (
	"testing"

	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// The tier tests read at cfLink's figures: 3 bytes/ns after 5000 ns, with
// 1000 bytes of KV per token, 16 000 per block.
const cfBlockBytes = 16 * cfKVBytes

// testTier is a tier of capacity blocks read at 3 bytes/ns after 5000 ns,
// holding the hashes of prefix's full blocks, readable at once.
func testTier(kind engine.TierKind, capacity int, prefix []kv.Segment) *engine.Tier {
	t := &engine.Tier{Kind: kind, Blocks: kv.NewTier(kind.String(), capacity), Offload: engine.OffloadOnCompletion,
		BlockBytes: cfBlockBytes, ReadBps: cfBandwidthBps, ReadLatencyNs: cfLatencyNs}
	for _, h := range kv.AppendBlockHashes(nil, prefix, 0, prefixTokens(prefix), 16) {
		t.Blocks.Put(h, 0)
	}
	return t
}

// tieredConfig is n colocated instances with prefix caching whose tiers
// are given by tiers(i).
func tieredConfig(t *testing.T, n int, reqs []Request, tiers func(i int) []*engine.Tier) *Config {
	cfg := &Config{Name: "tiers", Instances: instances(RoleColocated, n, engineCfg(t, 100, 4096, 8, true),
		linearTimer(cfA, cfB)), Router: &router.LeastLoaded{}, Source: &sliceSource{reqs: reqs}}
	for i := range cfg.Instances {
		cfg.Instances[i].Engine.Tiers = tiers(i)
	}
	return cfg
}

// TestOnboardClosedForm: a prompt of 80 tokens whose first 64 (4 blocks)
// are on host only copies them up — latency + N·block/B = 5000 +
// ⌈64 000/3⌉ = 26 334 ns — then prefills the other 16 (1000 + 160 ns).
// The onboard is its own time component, and its tokens the host's hits.
func TestOnboardClosedForm(t *testing.T) {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	reqs := []Request{{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 2, Prefix: prefix}}
	cfg := tieredConfig(t, 1, reqs, func(int) []*engine.Tier {
		return []*engine.Tier{testTier(engine.TierHost, 64, prefix)}
	})
	res := mustRun(t, cfg)
	r := res.Records[0]
	const onboardNs = cfLatencyNs + 21_334
	if got := r.FirstTokenNs - r.ArrivalNs; got != onboardNs+1160 {
		t.Errorf("TTFT %d ns, want %d", got, onboardNs+1160)
	}
	if r.Time[results.TOnboard] != onboardNs || r.TierTokens[0] != 64 || r.CachedTokens != 64 {
		t.Errorf("onboard %d ns, host tokens %d, cached %d; want %d, 64, 64", r.Time[results.TOnboard],
			r.TierTokens[0], r.CachedTokens, onboardNs)
	}
	checkAttribution(t, &r)
	if len(res.Tiers) != 1 || res.Tiers[0].ReadBytes != 64*cfKVBytes || res.Tiers[0].ReadBlocks != 4 {
		t.Errorf("tier results %+v, want host: 4 blocks, 64 000 bytes read", res.Tiers)
	}
}

// TestTwoOnboardsShareTheStoreLink: two instances read the same 4 blocks
// from one store at once, each at half its 3 bytes/ns: ⌈64 000/1.5⌉ =
// 42 667 ns, plus the latency, plus the 16-token prefill step.
func TestTwoOnboardsShareTheStoreLink(t *testing.T) {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	reqs := []Request{{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 2, Prefix: prefix},
		{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 2, Prefix: prefix}}
	store := testTier(engine.TierStore, 64, prefix)
	res := mustRun(t, tieredConfig(t, 2, reqs, func(int) []*engine.Tier { return []*engine.Tier{store} }))
	const want = cfLatencyNs + 42_667 + 1160
	for i, r := range res.Records {
		if got := r.FirstTokenNs - r.ArrivalNs; got != want || r.TierTokens[2] != 64 {
			t.Errorf("request %d on %d: TTFT %d ns, store tokens %d; want %d, 64", i, r.PrefillInstance, got,
				r.TierTokens[2], want)
		}
	}
	if res.Records[0].PrefillInstance == res.Records[1].PrefillInstance {
		t.Fatal("both requests ran on one instance: the store link was not shared between two")
	}
	if len(res.Tiers) != 1 || res.Tiers[0].ReadBytes != 2*64*cfKVBytes {
		t.Errorf("store read %+v, want 128 000 bytes once over its one link", res.Tiers)
	}
}

// TestStoreHandoffReadsFromTheStore: a prefiller that hands off through
// the store writes the prompt there (2 blocks at 1000 ns each, from the
// end of its 2000 ns prefill step), frees its KV when the write lands,
// and the decoder reads the prompt from the store — not from the
// prefiller — once it has landed.
func TestStoreHandoffReadsFromTheStore(t *testing.T) {
	reqs := []Request{{ArrivalNs: 1000, PromptTokens: 32, OutputTokens: 2}}
	cfg := pdConfig(t, reqs)
	store := testTier(engine.TierStore, 64, nil)
	store.WriteNsPerBlock = 1000
	cfg.Instances[0].Engine.PrefixCaching = true
	cfg.Instances[0].Engine.Tiers = []*engine.Tier{store}
	cfg.Instances[0].KVViaStore = true
	res := mustRun(t, cfg)
	r := res.Records[0]
	// Prefill 1000 + 320 ns ends at 2320; the write lands at 4320; the read
	// takes 5000 + ⌈32 000/3⌉ = 15 667 ns; then one decode step.
	const want = 1320 + 2000 + cfLatencyNs + 10_667 + cfDecodeNs
	if got := r.FirstTokenNs - r.ArrivalNs; got != want {
		t.Errorf("TTFT %d ns, want %d", got, want)
	}
	for _, l := range res.Links {
		if l.Name == "store/read" && l.Stats.Bytes != 32*cfKVBytes || l.Name != "store/read" && l.Stats.Bytes != 0 {
			t.Errorf("link %s carried %g bytes; want the prompt's 32 000 on store/read only", l.Name, l.Stats.Bytes)
		}
	}
	checkAttribution(t, &r)
}

// TestDecoderOnboardChargedOnce: B's prefiller crashes 1 ns after B's
// prefill, before the decoder (8 blocks, 2 tokens a step, busy with A)
// pulls B's KV, and the decoder's kv_load_failure_policy is recompute: it
// computes B's prompt itself beside A's decode; A's growth preempts B before its first token,
// and B, re-admitted once A is done, copies its first 64 tokens up from
// the decoder's host tier. That copy is before B's first token, inside
// its decode_queue_first: charging it again after the first token, as the
// recovery from a preemption (reprefill), counted it twice.
func TestDecoderOnboardChargedOnce(t *testing.T) {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	reqs := []Request{{ArrivalNs: 0, PromptTokens: 31, OutputTokens: 40},
		{ArrivalNs: 20_000, PromptTokens: 80, OutputTokens: 4, Prefix: prefix}}
	cfg := pdConfig(t, reqs)
	cfg.Faults = []Fault{{Kind: FaultCrash, Instance: 0, AtNs: 21_801}} // B's prefill ends at 21,800 ns
	cfg.Instances[1].RecomputeLoadFailures = true
	cfg.Instances[1].Engine = engineCfg(t, 8, 2, 2, true)
	cfg.Instances[1].Engine.Tiers = []*engine.Tier{testTier(engine.TierHost, 64, prefix)}
	res := mustRun(t, cfg)
	r := res.Records[1]
	if r.Status != results.Completed || r.TierTokens[0] == 0 || r.Preemptions == 0 || r.FirstTokenNs == 0 {
		t.Fatalf("record %+v: want completed, preempted and then read from the decoder's host", r)
	}
	if got := r.Time[results.TReprefill]; got != 0 {
		t.Errorf("reprefill %d ns, want 0: every preemption was before the first token (%v)", got, r.Time)
	}
	checkAttribution(t, &r)
}
