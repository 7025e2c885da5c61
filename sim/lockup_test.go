package sim

import (
	"strings"
	"testing"

	"handoff/models/perf"
	"handoff/models/router"
	"handoff/results"
)

// lockupCluster is a prefiller of pBlocks and a decoder of dBlocks blocks
// (16 tokens each; the decoder's token budget dBudget, with the shared
// waiting queue of earlier vLLM releases if shared, its steps timed by
// dTimer), sampled every sampleNs, with the lock-up threshold and
// watchdog given.
type lockupCluster struct {
	pBlocks, dBlocks, dBudget int
	shared                    bool
	dTimer                    perf.StepTimer
	sampleNs                  int64
	thresholdNs, abortNs      int64
}

func (lc lockupCluster) config(t *testing.T, reqs []Request) *Config {
	dec := engineCfg(t, lc.dBlocks, lc.dBudget, 8, false)
	dec.SharedQueue = lc.shared
	insts := append(instances(RolePrefill, 1, engineCfg(t, lc.pBlocks, 4096, 8, false), linearTimer(cfA, cfB)),
		instances(RoleDecode, 1, dec, lc.dTimer)...)
	return withNICs(&Config{Name: "lockup", Instances: insts, Router: &router.LeastLoaded{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}, LockupThresholdNs: lc.thresholdNs,
		LockupAbortNs: lc.abortNs, TimelineIntervalNs: lc.sampleNs, TimelineSamples: 1 << 20}, cfLink)
}

// pinnedCluster is the cluster of pinnedRequests: both pools of 4 blocks,
// the decoder's steps 1 ms, sampled every 100 µs, a lock-up threshold of
// 1 ms, and the watchdog given.
func pinnedCluster(t *testing.T, abortNs int64) *Config {
	return lockupCluster{pBlocks: 4, dBlocks: 4, dBudget: 256, dTimer: linearTimer(1_000_000, 0), sampleNs: 100_000,
		thresholdNs: 1_000_000, abortNs: abortNs}.config(t, pinnedRequests())
}

// pinnedRequests: A (48-token prompt, 16 tokens) takes 3 of the decoder's
// 4 blocks and grows into the fourth; B and C (32-token prompts) need 2
// each, so the prefiller, 4 blocks, holds their KV until A ends (16 decode
// steps, 16 ms). D, arriving at 1 ms, finds the prefiller's pool full of
// it: pinned, waiting for decode-0, whose admission waits for its own
// blocks.
func pinnedRequests() []Request {
	return []Request{
		{ArrivalNs: 0, PromptTokens: 48, OutputTokens: 16},
		{ArrivalNs: 100_000, PromptTokens: 32, OutputTokens: 2},
		{ArrivalNs: 100_000, PromptTokens: 32, OutputTokens: 2},
		{ArrivalNs: 1_000_000, PromptTokens: 32, OutputTokens: 2},
	}
}

// lockupRun drives cfg (with the hooks of drive) and checks that every
// request ended once and every instance drained.
func lockupRun(t *testing.T, cfg *Config, hooks ...func(c *cluster, atNs int64)) (*cluster, *Result) {
	t.Helper()
	n := len(cfg.Source.(*sliceSource).reqs)
	c, err := drive(t, cfg, 1, hooks...)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, n)
	checkDrained(t, c)
	return c, c.result()
}

// marked returns the spans of instance i's samples marked with each kind,
// as the first and last marked sample times (ns), and how many.
func marked(res *Result, i int, k LockKind) (firstNs, lastNs int64, n int) {
	for _, s := range res.Timelines[i].Samples {
		if s.Lockup != k {
			continue
		}
		if n == 0 {
			firstNs = s.AtNs
		}
		lastNs, n = s.AtNs, n+1
	}
	return firstNs, lastNs, n
}

// TestPinnedPrefiller: D waits on a prefiller whose 4 blocks all hold KV
// decode-0 has not pulled, from its arrival at 1 ms until A ends and the
// decoder takes B and C: one pinned spell, on prefill-0 alone, waiting
// for decode-0, which was not locked up but short of its own blocks. With
// no watchdog every request completes.
func TestPinnedPrefiller(t *testing.T) {
	c, res := lockupRun(t, pinnedCluster(t, 0))
	for _, r := range c.recs.all {
		if r.Status != results.Completed {
			t.Errorf("request %d ended %v (%q)", r.ID, r.Status, r.Reason)
		}
	}
	p, d := res.Instances[0], res.Instances[1]
	if p.LockSpells != [results.NumLockKinds]int{results.LockPinned: 1} || d.Lockups != 0 {
		t.Fatalf("prefill-0 lock-ups %v (%v ns), decode-0 %v: want one pinned spell on the prefiller",
			p.LockSpells, p.LockNs, d.LockSpells)
	}
	s := c.replicas[0].metrics.lock.last
	if s.fromNs != 1_000_000 || p.LockNs[results.LockPinned] != s.toNs-s.fromNs || s.toNs < 16_000_000 {
		t.Errorf("pinned from %d to %d ns (%d ns counted): want from D's arrival at 1 ms past A's end at 16 ms",
			s.fromNs, s.toNs, p.LockNs[results.LockPinned])
	}
	want := []results.LockupChain{{Chain: "prefill-0 pinned → decode-0 (own kv_blocks)",
		Instances: []string{"prefill-0", "decode-0"}, Spells: 1, Ns: s.toNs - s.fromNs, FirstNs: s.fromNs,
		LongestNs: s.toNs - s.fromNs, LongestFromNs: s.fromNs,
		Example: "prefill-0 pinned since 0.001 s → decode-0 (own kv_blocks)"}}
	if !equalChains(res.LockupChains, want) {
		t.Errorf("chains %+v\nwant %+v", res.LockupChains, want)
	}
	// The samples from 1 ms up to the spell's end say so; no other does.
	first, last, n := marked(res, 0, LockPinned)
	if first != 1_000_000 || last >= s.toNs || last < s.toNs-100_000 || n != int((last-first)/100_000)+1 {
		t.Errorf("samples marked pinned: %d from %d to %d ns, want every one from 1 ms to the spell's end at %d",
			n, first, last, s.toNs)
	}
	if _, _, n := marked(res, 1, LockPinned); n > 0 {
		t.Errorf("%d decoder samples marked pinned", n)
	}
}

func equalChains(a, b []results.LockupChain) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Chain != y.Chain || strings.Join(x.Instances, ",") != strings.Join(y.Instances, ",") || x.Cycle != y.Cycle ||
			x.Spells != y.Spells || x.Ns != y.Ns || x.FirstNs != y.FirstNs || x.LongestNs != y.LongestNs ||
			x.LongestFromNs != y.LongestFromNs || x.Example != y.Example {
			return false
		}
	}
	return true
}

// TestPinnedPrefillerAborted: with a watchdog of 5 ms the pinned
// prefiller, no progress since its last prefill, aborts its requests: D,
// queued, at once; B and C, whose KV it holds, when the decoder's step in
// flight ends (their decoder drops them) — all failed with the reason
// naming the kind. Its blocks come free; A completes.
func TestPinnedPrefillerAborted(t *testing.T) {
	deferred := 0 // most aborts waiting for a step at once
	c, res := lockupRun(t, pinnedCluster(t, 5_000_000),
		func(c *cluster, _ int64) { deferred = max(deferred, len(c.client.pending)) })
	if deferred != 2 {
		t.Errorf("%d aborts waited for the decoder's step, want B and C", deferred)
	}
	for _, r := range c.recs.all {
		want := results.Failed
		if r.ID == 0 {
			want = results.Completed
		}
		if r.Status != want || want == results.Failed && r.Reason != "failed: prefill-0 pinned: no progress for 0.005 s" {
			t.Errorf("request %d ended %v (%q), want %v", r.ID, r.Status, r.Reason, want)
		}
	}
	p := res.Instances[0]
	if p.LockSpells != [results.NumLockKinds]int{results.LockPinned: 1} || res.Instances[1].Lockups != 0 {
		t.Errorf("lock-ups %v and %v, want one pinned spell on the prefiller", p.LockSpells, res.Instances[1].LockSpells)
	}
	if len(res.LockupChains) != 1 || res.LockupChains[0].Chain != "prefill-0 pinned → decode-0 (own kv_blocks)" {
		t.Errorf("chains %+v", res.LockupChains)
	}
}

// deadlockRequests: the deadlock of TestDeadlockedDecoderFailsItsRequests
// (A, a victim at the head of the decoder's shared queue, needs 4 of its
// 6 blocks while B, its KV arrived, holds 3), then C and E, whose KV the
// prefiller (6 blocks) holds for the deadlocked decoder, and F, which the
// full prefiller cannot start.
func deadlockRequests() []Request {
	return []Request{
		{ArrivalNs: 0, PromptTokens: 32, OutputTokens: 60},
		{ArrivalNs: 20_000, PromptTokens: 48, OutputTokens: 5},
		{ArrivalNs: 200_000, PromptTokens: 48, OutputTokens: 5},
		{ArrivalNs: 200_000, PromptTokens: 48, OutputTokens: 5},
		{ArrivalNs: 300_000, PromptTokens: 16, OutputTokens: 5},
	}
}

// TestLockupChainToALockedDecoder: the deadlock of deadlockRequests, and
// with a decoder budget of 32 tokens the livelock of the same queue (A
// re-prefills in chunks of 32, and the second needs a block B holds, so A
// preempts itself, again and again: busy, no token). The decoder locks up
// in that kind, its watchdog (1 ms) fails its requests — C and E among
// them, whose KV the prefiller held — with the reason; the prefiller,
// pinned from F's arrival at 300 µs until then, waited for it: one chain,
// prefiller then decoder in its kind. The samples say which was which.
func TestLockupChainToALockedDecoder(t *testing.T) {
	for _, tc := range []struct {
		budget int
		kind   LockKind
	}{{256, LockDeadlock}, {32, LockPreemptionLoop}} {
		cfg := lockupCluster{pBlocks: 6, dBlocks: 6, dBudget: tc.budget, shared: true, dTimer: linearTimer(cfA, cfB),
			sampleNs: 10_000, thresholdNs: 100_000, abortNs: 1_000_000}.config(t, deadlockRequests())
		c, res := lockupRun(t, cfg)
		reason := "failed: decode-0 " + tc.kind.String() + ": no progress for 0.001 s"
		for _, r := range c.recs.all {
			if f := r.ID < 4; f != (r.Status == results.Failed) || f && r.Reason != reason {
				t.Errorf("%v: request %d ended %v (%q), want A–E failed (%q), F completed", tc.kind, r.ID, r.Status, r.Reason, reason)
			}
		}
		p, d := res.Instances[0], res.Instances[1]
		var want [results.NumLockKinds]int
		want[tc.kind-1] = 1
		if p.LockSpells != [results.NumLockKinds]int{results.LockPinned: 1} || d.LockSpells != want {
			t.Fatalf("%v: lock-ups %v and %v, want one pinned spell, one of %v", tc.kind, p.LockSpells, d.LockSpells, tc.kind)
		}
		ps, ds := c.replicas[0].metrics.lock.last, c.replicas[1].metrics.lock.last
		if ps.fromNs != 300_000 || ps.toNs != ds.toNs || ds.fromNs >= ps.fromNs {
			t.Errorf("%v: pinned %d–%d ns, decoder locked %d–%d: want the decoder first, both ended by its abort",
				tc.kind, ps.fromNs, ps.toNs, ds.fromNs, ds.toNs)
		}
		chain := "prefill-0 pinned → decode-0 " + tc.kind.String()
		if len(res.LockupChains) != 1 || res.LockupChains[0].Chain != chain || res.LockupChains[0].Ns != ps.toNs-ps.fromNs {
			t.Errorf("%v: chains %+v, want %q", tc.kind, res.LockupChains, chain)
		}
		for i, s := range []lockSpell{ps, ds} {
			first, last, n := marked(res, i, s.kind)
			if n == 0 || first < s.fromNs || first-s.fromNs >= 10_000 || last >= s.toNs || s.toNs-last > 10_000 {
				t.Errorf("%v: %s's samples marked %v from %d to %d ns, want its spell %d–%d", tc.kind,
					c.cfg.Instances[i].Name, s.kind, first, last, s.fromNs, s.toNs)
			}
		}
	}
}

// TestLockupChainCycle: no cycle can form in this model (lockchain.go),
// but the chain is followed generally: two instances each pinned waiting
// for the other close one.
func TestLockupChainCycle(t *testing.T) {
	c := newCluster(pdConfig(t, nil))
	c.cfg.LockupThresholdNs, c.nowNs = 1e9, 5e9
	c.replicas[1].metrics.lock.open = lockSpell{kind: LockPinned, fromNs: 1e9, waitsFor: 0}
	c.countSpell(0, lockSpell{kind: LockPinned, fromNs: 2e9, toNs: 5e9, waitsFor: 1})
	want := results.LockupChain{Chain: "prefill-0 pinned → decode-0 pinned → prefill-0 (cycle)",
		Instances: []string{"prefill-0", "decode-0"}, Cycle: true, Spells: 1, Ns: 3e9, FirstNs: 2e9,
		LongestNs: 3e9, LongestFromNs: 2e9,
		Example: "prefill-0 pinned since 2.000 s → decode-0 pinned since 1.000 s → prefill-0 (cycle)"}
	if got, _ := c.chainResults(); !equalChains(got, []results.LockupChain{want}) {
		t.Errorf("chains %+v\nwant %+v", got, want)
	}
}

// checkLockups checks a run's lock-up figures: an instance's spells do
// not overlap, so their time is within the run's; the totals are the sums
// by kind; a chain's spells are its first instance's, in a kind that
// waits for another (pinned), and no longer than those.
func checkLockups(t *testing.T, seed uint64, res *Result) {
	t.Helper()
	byName := map[string]*InstanceResult{}
	for i := range res.Instances {
		in := &res.Instances[i]
		byName[in.Name] = in
		n, ns := 0, int64(0)
		for k := range in.LockSpells {
			n, ns = n+in.LockSpells[k], ns+in.LockNs[k]
		}
		if n != in.Lockups || ns != in.LockupNs || ns > res.SimTimeNs || ns < 0 {
			t.Fatalf("seed %d: %s: lock-ups %v (%v ns), totals %d (%d ns), run %d ns", seed, in.Name,
				in.LockSpells, in.LockNs, in.Lockups, in.LockupNs, res.SimTimeNs)
		}
	}
	spells, ns := map[string]int{}, map[string]int64{}
	for _, ch := range res.LockupChains {
		first := ch.Instances[0]
		spells[first] += ch.Spells
		ns[first] += ch.Ns
		if len(ch.Instances) < 2 || ch.LongestNs > ch.Ns || ch.FirstNs > ch.LongestFromNs {
			t.Fatalf("seed %d: chain %+v", seed, ch)
		}
	}
	for name, n := range spells {
		in := byName[name]
		if n > in.LockSpells[results.LockPinned] || ns[name] > in.LockNs[results.LockPinned] {
			t.Fatalf("seed %d: %s's chains hold %d spells (%d ns), its pinned spells %d (%d ns)", seed, name,
				n, ns[name], in.LockSpells[results.LockPinned], in.LockNs[results.LockPinned])
		}
	}
}
