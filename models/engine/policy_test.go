package engine

import (
	"testing"

	"handoff/models/kv"
)

// policySetup is preemptionSetup under another policy: a 7-block pool, two
// 40-token prompts each generating 30 tokens, both needing a fourth block at
// context 49 when one is free (see preemptionSetup).
func policySetup(t *testing.T, p Policy, hostBlocks int) (in *Instance, a, b *Seq) {
	t.Helper()
	in = newInst(t, 7, 8192, 8)
	in.cfg.Preemption, in.cfg.HostBlocks = p, hostBlocks
	a, b = seq(in, 1, 40, 30), seq(in, 2, 40, 30)
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	for now := int64(1); now < 10; now++ {
		step(t, in, now)
	}
	return in, a, b
}

func TestSwapMovesTheVictimToTheHostTierAndBack(t *testing.T) {
	in, a, b := policySetup(t, Swap, 10)
	bt, res := in.Schedule(0)
	// b, the last admitted, is swapped out: its 3 blocks are copied to the host.
	if len(res.Preempted) != 1 || b.SwapOuts != 1 || in.HostBlocksUsed() != 3 || bt.SwapBlocks != 3 {
		t.Fatalf("preempted %d, swap-outs %d, host %d, swapped blocks %d", len(res.Preempted), b.SwapOuts,
			in.HostBlocksUsed(), bt.SwapBlocks)
	}
	in.Complete(10, 10)
	for !a.Finished() {
		if _, res := in.Schedule(0); len(res.Recovered) > 0 {
			t.Fatal("b swapped in while a still needs every block")
		}
		in.Complete(11, 11)
	}
	// a is done: b comes back with its context intact, no re-prefill.
	bt, res = in.Schedule(0)
	if len(res.Recovered) != 1 || bt.SwapBlocks != 3 || bt.PrefillTokens != 0 || bt.DecodeSeqs != 1 {
		t.Fatalf("swap-in step %+v, recovered %d", *bt, len(res.Recovered))
	}
	in.Complete(12, 12)
	if in.HostBlocksUsed() != 0 || in.Stats().ReprefillTokens != 0 || b.Acct[AcctSwap] != 12-9 {
		t.Fatalf("host %d, re-prefill %d, swap time %d", in.HostBlocksUsed(), in.Stats().ReprefillTokens, b.Acct[AcctSwap])
	}
	check(t, in)
}

func TestSwapFallsBackToRecomputeWhenTheHostIsFull(t *testing.T) {
	in, _, b := policySetup(t, Swap, 2) // the victim holds 3 blocks
	in.Schedule(0)
	if b.SwapOuts != 0 || b.Preemptions != 1 || in.HostBlocksUsed() != 0 {
		t.Fatalf("swap-outs %d preemptions %d host %d: want a recompute", b.SwapOuts, b.Preemptions, in.HostBlocksUsed())
	}
}

func TestSwappedSequencesBlockNewAdmissions(t *testing.T) {
	in, _, _ := policySetup(t, Swap, 10)
	in.Schedule(0)
	in.Complete(10, 10)
	c := seq(in, 3, 1, 1) // fits, but vLLM V0 admits nothing while any request is swapped out
	in.Enqueue(c, 10)
	bt, _ := in.Schedule(0)
	if bt.PrefillSeqs != 0 || c.Generated != 0 {
		t.Fatalf("admitted new work while a sequence is swapped out: %+v", *bt)
	}
}

func TestRejectRefusesAPreemptedSequenceOnceItsCacheHitFallsBelowThreshold(t *testing.T) {
	in, a, b := policySetup(t, Reject, 0)
	b.CacheHitThreshold = 0.9
	// Right after the preemption all 3 of b's full blocks are still cached
	// (48 of 49 tokens, 98%): it waits for room. As a grows it evicts them;
	// at the first admission attempt below 90% b is refused.
	var rejectedAt int
	for i := 1; !a.Finished(); i++ {
		_, res := in.Schedule(0)
		if len(res.Rejected) > 0 {
			if res.Rejected[0] != b || rejectedAt != 0 {
				t.Fatalf("step %d: rejected %v", i, res.Rejected)
			}
			rejectedAt = i
		}
		in.Complete(int64(10+i), int64(10+i))
	}
	if rejectedAt == 0 || b.Blocks() != 0 || in.Stats().Rejections != 1 || in.Waiting() != 0 {
		t.Fatalf("rejected at step %d, b blocks %d, waiting %d", rejectedAt, b.Blocks(), in.Waiting())
	}
	check(t, in)
}

func TestRejectReadmitsAPreemptedSequenceAboveItsThreshold(t *testing.T) {
	in, a, b := policySetup(t, Reject, 0)
	b.CacheHitThreshold = 0.6 // at worst 32 of 49 cached: 65% ≥ 60%
	for !a.Finished() {
		if _, res := in.Schedule(0); len(res.Rejected) > 0 {
			t.Fatal("rejected above its threshold")
		}
		in.Complete(10, 10)
	}
	bt, res := in.Schedule(0)
	if len(res.Rejected) != 0 || bt.PrefillTokens != 17 {
		t.Fatalf("rejected %d, re-prefill %d tokens; want re-admission recomputing 17", len(res.Rejected), bt.PrefillTokens)
	}
}

func TestAccountingCoversEveryNanosecond(t *testing.T) {
	in := newInst(t, 100, 8192, 8)
	s := seq(in, 1, 40, 3)
	in.Enqueue(s, 5)    // waits 5 → 10
	in.Schedule(0)      // step 10 → 30
	in.Complete(10, 30) // first token
	in.Schedule(0)      // step 40 → 50 (a gap: 30 → 40 queued)
	in.Complete(40, 50) //
	in.Schedule(0)      //
	in.Complete(50, 60) // done
	want := Acct{AcctQueue: 5 + 10, AcctCompute: 20 + 10 + 10}
	if s.Acct != want || s.Acct.Total() != 60-5 {
		t.Fatalf("acct %v, want %v", s.Acct, want)
	}
}

// TestVictimsLastUntilRecovery: under each policy the preempted b is a
// victim from its preemption until it has recovered — recomputed its
// context, been swapped back in — or been rejected.
func TestVictimsLastUntilRecovery(t *testing.T) {
	for _, p := range []Policy{Recompute, Swap, Reject} {
		in, a, b := policySetup(t, p, 10)
		b.CacheHitThreshold = 0.9
		_, res := in.Schedule(0)
		if len(res.Preempted) != 1 || in.Victims() != 1 {
			t.Fatalf("%v: preempted %d, victims %d; want b, one victim", p, len(res.Preempted), in.Victims())
		}
		in.Complete(10, 10)
		now := int64(11)
		for ; in.Victims() > 0 && now < 200; now++ {
			if !a.Finished() && in.Victims() != 1 {
				t.Fatalf("%v: %d victims while b waits", p, in.Victims())
			}
			in.Schedule(0)
			in.Complete(now, now)
		}
		st := in.Stats()
		if in.Victims() != 0 || st.ReprefillTokens+st.SwapOuts+st.Rejections == 0 {
			t.Fatalf("%v at %d: victims %d, stats %+v: want b recovered or rejected", p, now, in.Victims(), st)
		}
	}
}

// TestSharedQueueStrandsArrivedKVBehindAVictim: a 6-block decoder runs A
// (32-token prompt, remote) and reserves 3 blocks for B's 48-token prompt.
// A takes the last free block at context 33 and, at context 49, needs one
// more: it is preempted and its 3 blocks freed, but re-prefilling it needs
// 4. B's KV then arrives. Today's vLLM admits B first (it holds its
// blocks), B finishes and A recovers. With the shared queue of earlier
// vLLM, A at the head cannot get its blocks, admission stops before B, and
// nothing runs again: a deadlock.
func TestSharedQueueStrandsArrivedKVBehindAVictim(t *testing.T) {
	for _, shared := range []bool{false, true} {
		in := newInst(t, 6, 256, 8)
		in.cfg.SharedQueue, in.cfg.PrefixCaching = shared, false
		a, b := seq(in, 1, 32, 60), seq(in, 2, 48, 5)
		a.Remote, b.Remote = true, true
		in.Enqueue(a, 0)
		in.Schedule(0)
		in.KVArrived(a, 0)
		in.Enqueue(b, 0)
		now := int64(1)
		for ; a.Preemptions == 0 && now < 100; now++ {
			if bt, _ := in.Schedule(0); bt != nil {
				in.Complete(now, now)
			}
		}
		in.KVArrived(b, now)
		for ; now < 400 && !(a.Finished() && b.Finished()); now++ {
			bt, _ := in.Schedule(0)
			if bt == nil {
				break
			}
			in.Complete(now, now)
		}
		done := a.Finished() && b.Finished()
		if done == shared {
			t.Errorf("shared queue %v: A finished %v, B finished %v at step %d; want both done only without it",
				shared, a.Finished(), b.Finished(), now)
		}
		if shared && (in.Running() != 0 || in.Waiting() != 2 || b.Generated != 0) {
			t.Errorf("deadlock: running %d waiting %d, B generated %d", in.Running(), in.Waiting(), b.Generated)
		}
	}
}

// TestBudgetBelowMaxSeqsIsRefused: vLLM refuses max_num_batched_tokens
// below max_num_seqs (vllm/config/scheduler.py).
func TestBudgetBelowMaxSeqsIsRefused(t *testing.T) {
	cfg := Config{MaxBatchedTokens: 128, MaxSeqs: 256, NumBlocks: 10, MaxModelLen: 100}
	if err := cfg.Validate(); err == nil {
		t.Fatal("a 128-token budget for 256 sequences was accepted")
	}
}

// TestAbortFreesEverythingWherever: a sequence aborted from each place it
// can be — waiting, pulling remote KV (in either queue order), with its KV
// arrived, swapped out, running and cruising — leaves the instance idle
// with every block back.
func TestAbortFreesEverythingWherever(t *testing.T) {
	remote := func(shared bool) (*Instance, *Seq) {
		in := newInst(t, 100, 256, 8)
		in.cfg.SharedQueue = shared
		s := seq(in, 9, 100, 5)
		s.Remote = true
		in.Enqueue(s, 0)
		in.Schedule(0) // reserves its blocks: pulling
		return in, s
	}
	cases := map[string]func() (*Instance, []*Seq){
		"waiting": func() (*Instance, []*Seq) {
			in := newInst(t, 100, 256, 8)
			s := seq(in, 1, 100, 5)
			in.Enqueue(s, 0)
			return in, []*Seq{s}
		},
		"pulling":        func() (*Instance, []*Seq) { in, s := remote(false); return in, []*Seq{s} },
		"pulling shared": func() (*Instance, []*Seq) { in, s := remote(true); return in, []*Seq{s} },
		"arrived shared": func() (*Instance, []*Seq) {
			in, s := remote(true)
			in.KVArrived(s, 1)
			return in, []*Seq{s}
		},
		"ready": func() (*Instance, []*Seq) {
			in, s := remote(false)
			in.KVArrived(s, 1)
			return in, []*Seq{s}
		},
		"swapped and running": func() (*Instance, []*Seq) {
			in, a, b := policySetup(t, Swap, 10)
			in.Schedule(0) // b is swapped out
			in.Complete(10, 10)
			return in, []*Seq{b, a}
		},
	}
	for name, setup := range cases {
		in, seqs := setup()
		for _, s := range seqs {
			in.Abort(s)
		}
		if !in.Idle() || in.Pool().UsedBlocks() != 0 || in.HostBlocksUsed() != 0 || in.Victims() != 0 {
			t.Errorf("%s: idle %v, %d blocks, %d host blocks, %d victims after aborting",
				name, in.Idle(), in.Pool().UsedBlocks(), in.HostBlocksUsed(), in.Victims())
		}
		check(t, in)
	}
}

// TestAdmitHitThresholdChecksTheFirstAdmission: a sequence carrying a
// first-admission threshold (llm-d's decode-first request) is refused
// when the share of its prompt cached is below it — 32 of 40 tokens (0.8)
// under 0.9 — holding nothing; at 0.5 it is admitted and prefills the 8
// tokens it misses.
func TestAdmitHitThresholdChecksTheFirstAdmission(t *testing.T) {
	prefix := []kv.Segment{{ID: 9, Tokens: 32}}
	in := newInst(t, 100, 8192, 8)
	warm := seq(in, 1, 40, 1)
	warm.Prefix = prefix
	in.Enqueue(warm, 0)
	step(t, in, 1)
	for k, tc := range []struct {
		threshold float64
		refused   bool
	}{{0.9, true}, {0.5, false}} {
		s := seq(in, uint64(2+k), 40, 2)
		s.Prefix, s.AdmitHitThreshold = prefix, tc.threshold
		in.Enqueue(s, 2)
		b, res := in.Schedule(0)
		if refused := len(res.Rejected) == 1 && res.Rejected[0] == s; refused != tc.refused {
			t.Fatalf("threshold %g: rejected %v, want refused %v", tc.threshold, res.Rejected, tc.refused)
		}
		if tc.refused && (b != nil || s.Blocks() != 0 || in.Waiting() != 0) {
			t.Errorf("threshold %g: refused, yet a step %v, %d blocks, %d waiting", tc.threshold, b, s.Blocks(), in.Waiting())
		}
		if !tc.refused && (b == nil || b.PrefillTokens != 8 || s.CachedTokens != 32) {
			t.Errorf("threshold %g: step %+v, %d cached; want 8 prefill tokens after 32 cached", tc.threshold, b, s.CachedTokens)
		}
		if b != nil {
			in.Complete(3, 3)
		}
	}
	if in.Stats().Rejections != 1 {
		t.Errorf("%d rejections, want 1", in.Stats().Rejections)
	}
	check(t, in)
}

// TestAdmitHitThresholdIgnoresReadmission: past its first admission a
// sequence is an ordinary one: preempted, it is recomputed, whatever its
// first-admission threshold and however little of it stays cached.
func TestAdmitHitThresholdIgnoresReadmission(t *testing.T) {
	in, a, b := policySetup(t, Recompute, 0)
	b.AdmitHitThreshold = 1
	for !a.Finished() || !b.Finished() {
		if _, res := in.Schedule(0); len(res.Rejected) > 0 {
			t.Fatal("a preempted sequence refused at re-admission for its first-admission threshold")
		}
		in.Complete(10, 10)
	}
	if b.Preemptions == 0 {
		t.Fatal("b never preempted: the test proves nothing")
	}
	check(t, in)
}
