package sim

import (
	"testing"

	"handoff/models/perf"
	"handoff/results"
)

// TestCascadeMetricsOnAConstructedChain: on a decoder, A is preempted at
// 10, again at 15 (still recovering: one victim), B at 20, A recovers at 30,
// is preempted again at 40, B recovers at 50 and A at 60: one chain of four
// preemptions lasting 50 ns. C alone at 100-110 is a single preemption, not
// a cascade. The engine reports the victims left after each event.
func TestCascadeMetricsOnAConstructedChain(t *testing.T) {
	m := instanceMetrics{progressNs: -1}
	for _, e := range []struct {
		atNs               int64
		preempted, victims int
	}{{10, 1, 1}, {15, 1, 1}, {20, 1, 2}, {30, 0, 1}, {40, 1, 2}, {50, 0, 1}} {
		if e.preempted > 0 {
			m.preempt(e.preempted, e.atNs)
		}
		m.victims(e.victims, e.atNs)
	}
	if m.cascades != 0 || m.pending != 1 || m.depth != 4 || !m.open {
		t.Fatalf("mid-chain %+v: want the chain open at depth 4 with A pending", m)
	}
	m.victims(0, 60)
	m.preempt(1, 100)
	m.victims(1, 100)
	m.victims(0, 110)
	if m.cascades != 1 || m.longest != 4 || m.cascadeNs != 50 || m.pending != 0 || m.open {
		t.Fatalf("metrics %+v: want 1 cascade, longest 4, 50 ns", m)
	}
}

// TestLockupIsABusySpellWithoutNormalTokens: threshold 1 s; a spell that
// starts at 0 and produces its next normal token at 1.5 s is one lock-up of
// 1.5 s; tokens at 2 s and 2.9 s are progress within the threshold.
func TestLockupIsABusySpellWithoutNormalTokens(t *testing.T) {
	c := newCluster(pdConfig(t, nil))
	c.cfg.LockupThresholdNs = 1e9
	c.busyWith(1, &perf.Batch{}, 1)
	c.replicas[1].metrics.preemptedNow = true // the spell follows a preemption
	for _, step := range []struct {
		atNs   int64
		tokens int
	}{{5e8, 0}, {1.5e9, 3}, {2e9, 1}, {2.9e9, 2}} {
		c.nowNs = step.atNs
		c.progress(1, step.tokens)
	}
	const loop = results.LockPreemptionLoop
	if l := c.replicas[1].metrics.lock; l.spells != [results.NumLockKinds]int{loop: 1} || l.spellNs[loop] != 1.5e9 {
		t.Fatalf("lock-ups %v (%v ns), want 1 preemption loop of 1.5 s", l.spells, l.spellNs)
	}
	c.nowNs = 5e9 // a 2.1 s spell with no preemption: a long prefill, not a lock-up
	c.progress(1, 1)
	if l := c.replicas[1].metrics.lock; l.spells[loop] != 1 {
		t.Fatalf("lock-ups %v: a spell without preemption counted", l.spells)
	}
}

// TestRejectionRebuildsTheRequest checks the RFC #24256 reconstruction: a
// request with a 100-token prompt and 50 output tokens refused after 20
// tokens comes back (phase 2) as a 120-token prompt asking for 30 more, with
// the 20 counted as delivered; phase 1 re-sends the original and counts the
// 20 as wasted.
func TestRejectionRebuildsTheRequest(t *testing.T) {
	for _, phase := range []int{1, 2} {
		cfg := pdConfig(t, nil)
		cfg.Instances[1].RejectPhase = phase
		c := newCluster(cfg)
		c.recs.add(resultsRecord(0))
		ref := c.newFlight(&Request{ID: 0, PromptTokens: 100, OutputTokens: 50}, phaseRouting)
		f := c.flights.at(ref)
		f.route.Prefill, f.route.Decode = 0, 1
		s := c.replicas[1].eng.NewSeq()
		s.Ref, s.Generated = ref, 20
		f.phase, f.dseq = phaseDecoding, s // decoding on decoder 1
		c.record(0).FirstTokenNs = 1       // the client saw tokens already
		c.replicas[1].outstanding = 1
		c.rejected(1, s)
		rec := c.recs.all[0]
		want := map[int][4]int{1: {100, 50, 0, 20}, 2: {120, 30, 20, 0}}[phase]
		got := [4]int{f.req.PromptTokens, f.req.OutputTokens, f.delivered, int(rec.WastedTokens)}
		if got != want || rec.Rejections != 1 || f.attempt != 1 || f.pseq == nil {
			t.Errorf("phase %d: prompt, output, delivered, wasted = %v, want %v (rejections %d, re-placed %v)",
				phase, got, want, rec.Rejections, f.pseq != nil)
		}
	}
}
