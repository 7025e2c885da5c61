package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"handoff/models/kv"
)

func newInst(t *testing.T, blocks, budget, seqs int) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: budget, MaxSeqs: seqs, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, PrefixCaching: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// newHybrid is newInst for a hybrid model: groups sliding-window groups
// of window tokens beside the full-attention one.
func newHybrid(t *testing.T, blocks, budget, seqs, window, groups int) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: budget, MaxSeqs: seqs, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, PrefixCaching: true, SlidingWindow: window, SlidingGroups: groups}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

func seq(in *Instance, id uint64, prompt, out int) *Seq {
	s := in.NewSeq()
	s.UniqueID, s.PromptTokens, s.MaxNew = id, prompt, out
	return s
}

// step runs one scheduling pass and completes it at nowNs, failing if there
// was nothing to compute.
func step(t *testing.T, in *Instance, nowNs int64) *StepResult {
	t.Helper()
	if b, _ := in.Schedule(0); b == nil {
		t.Fatalf("nothing scheduled at %d", nowNs)
	}
	return in.Complete(nowNs, nowNs)
}

func check(t *testing.T, in *Instance) {
	t.Helper()
	if err := in.Pool().Check(); err != nil {
		t.Fatal(err)
	}
}

func TestColocatedSequencePrefillsThenDecodes(t *testing.T) {
	in := newInst(t, 100, 8192, 8)
	s := seq(in, 1, 100, 3)
	in.Enqueue(s, 0)
	b, _ := in.Schedule(0)
	if b.PrefillSeqs != 1 || b.PrefillTokens != 100 || b.DecodeSeqs != 0 {
		t.Fatalf("first step %+v, want one 100-token prefill", *b)
	}
	res := in.Complete(10, 10)
	if len(res.FirstTokens) != 1 || s.Generated != 1 || s.Blocks() != 7 {
		t.Fatalf("after prefill: first=%d generated=%d blocks=%d", len(res.FirstTokens), s.Generated, s.Blocks())
	}
	b, _ = in.Schedule(0)
	if b.DecodeSeqs != 1 || b.DecodeContext != 101 {
		t.Fatalf("second step %+v, want one decode over 101 tokens", *b)
	}
	res = in.Complete(15, 15)
	if g := gaps(res); len(g) != 1 || g[0] != 5 {
		t.Fatalf("gaps %v, want [5]", g)
	}
	res = step(t, in, 20)
	if len(res.Finished) != 1 || !s.Finished() || in.Pool().UsedBlocks() != 0 {
		t.Fatalf("not finished cleanly: finished=%d used=%d", len(res.Finished), in.Pool().UsedBlocks())
	}
	check(t, in)
}

func TestChunkedPrefillSplitsAPromptAcrossSteps(t *testing.T) {
	in := newInst(t, 100, 64, 8)
	s := seq(in, 1, 100, 2)
	in.Enqueue(s, 0)
	if res := step(t, in, 1); len(res.FirstTokens) != 0 {
		t.Fatal("first token after a partial chunk")
	}
	b, _ := in.Schedule(0)
	if b.PrefillTokens != 36 || b.PrefillCtxRead != 64 {
		t.Fatalf("second chunk %+v, want 36 tokens over 64 cached", *b)
	}
	if res := in.Complete(2, 2); len(res.FirstTokens) != 1 {
		t.Fatal("no first token after the last chunk")
	}
}

func TestNoChunkingAdmitsOnlyWholePrompts(t *testing.T) {
	in := newInst(t, 100, 64, 8)
	in.cfg.NoChunkedPrefill = true
	in.Enqueue(seq(in, 1, 100, 2), 0)
	if b, _ := in.Schedule(0); b != nil {
		t.Fatalf("scheduled %+v with a prompt larger than the budget", *b)
	}
}

func TestHeadOfLineBlocksAdmissionWhenBlocksRunOut(t *testing.T) {
	in := newInst(t, 10, 8192, 8) // 160 tokens of KV
	a, b, c := seq(in, 1, 100, 50), seq(in, 2, 100, 5), seq(in, 3, 10, 5)
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	in.Enqueue(c, 0)
	step(t, in, 1)
	if in.Running() != 1 || in.Waiting() != 2 {
		t.Fatalf("running %d waiting %d: b needs 7 blocks, 3 free; c must wait behind b",
			in.Running(), in.Waiting())
	}
}

func TestMaxNumSeqsCapsTheRunningSet(t *testing.T) {
	in := newInst(t, 100, 8192, 2)
	for i := range 3 {
		in.Enqueue(seq(in, uint64(i+1), 10, 5), 0)
	}
	step(t, in, 1)
	if in.Running() != 2 || in.Waiting() != 1 {
		t.Fatalf("running %d waiting %d, want 2 and 1", in.Running(), in.Waiting())
	}
}

// preemptionSetup fills a 7-block pool (112 tokens) with two 40-token
// prompts generating 30 tokens each: both hold 3 blocks after prefill and
// both need a fourth at context 49, when only one is free.
func preemptionSetup(t *testing.T) (in *Instance, a, b *Seq) {
	in = newInst(t, 7, 8192, 8)
	a, b = seq(in, 1, 40, 30), seq(in, 2, 40, 30)
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	for now := int64(1); now < 10; now++ {
		step(t, in, now)
	}
	return in, a, b
}

func TestPreemptionEvictsLastAdmittedAndRecomputesItsWholeContext(t *testing.T) {
	in, a, b := preemptionSetup(t)
	step(t, in, 10)
	in.settleFrom(0) // a may be cruising: bring its counters up to date
	// a takes the free block; b, the last admitted, is its own victim.
	if b.Preemptions != 1 || a.Generated != 10 || b.Generated != 9 {
		t.Fatalf("a generated %d, b generated %d, b preemptions %d", a.Generated, b.Generated, b.Preemptions)
	}
	for !a.Finished() {
		step(t, in, 11)
	}
	// b re-prefills prompt + 9 generated = 49 tokens, minus the two full
	// blocks that survived in the prefix cache (a's growth evicted the third).
	bb, _ := in.Schedule(0)
	if bb.PrefillTokens != 17 || bb.PrefillCtxRead != 32 {
		t.Fatalf("re-prefill %+v, want 17 tokens after a 32-token cache hit", *bb)
	}
	in.Complete(12, 12)
	if st := in.Stats(); st.ReprefillTokens != 17 || st.Preemptions != 1 {
		t.Fatalf("stats %+v, want 17 re-prefill tokens and 1 preemption", st)
	}
	check(t, in)
}

func TestNoAdmissionInAStepThatPreempted(t *testing.T) {
	in, _, b := preemptionSetup(t)
	c := seq(in, 3, 1, 1) // would fit in b's freed blocks
	in.Enqueue(c, 0)
	bt, res := in.Schedule(0)
	if len(res.Preempted) != 1 || res.Preempted[0] != b || bt.PrefillSeqs != 0 || in.Running() != 1 {
		t.Fatalf("preempted %d, prefills %d, running %d: nothing may be admitted",
			len(res.Preempted), bt.PrefillSeqs, in.Running())
	}
}

func TestPrefixCacheServesASharedSystemPrompt(t *testing.T) {
	in := newInst(t, 100, 8192, 8)
	sys := []kv.Segment{{ID: 42, Tokens: 64}}
	a := seq(in, 1, 80, 1)
	a.Prefix = sys
	in.Enqueue(a, 0)
	step(t, in, 1)
	b := seq(in, 2, 90, 1)
	b.Prefix = sys
	in.Enqueue(b, 0)
	bt, _ := in.Schedule(0)
	if b.CachedTokens != 64 || bt.PrefillTokens != 26 {
		t.Fatalf("cached %d, computed %d: want 64 cached and 26 computed", b.CachedTokens, bt.PrefillTokens)
	}
}

func TestDecodeRoleReservesBlocksPullsThenResumesFromLastPromptToken(t *testing.T) {
	in := newInst(t, 100, 8192, 8)
	s := seq(in, 1, 100, 2)
	s.Remote = true
	in.Enqueue(s, 0)
	b, res := in.Schedule(0)
	if b != nil || len(res.Pulls) != 1 || s.Blocks() != 7 || s.RemoteTokens != 100 {
		t.Fatalf("batch %v pulls %d blocks %d remote %d", b, len(res.Pulls), s.Blocks(), s.RemoteTokens)
	}
	if b, _ := in.Schedule(0); b != nil || in.Pulling() != 1 {
		t.Fatal("scheduled work while the KV is in flight")
	}
	in.KVArrived(s, 0)
	b, _ = in.Schedule(0)
	if b.DecodeSeqs != 1 || b.DecodeContext != 100 {
		t.Fatalf("first decode step %+v, want one token over 100", *b)
	}
	if res := in.Complete(5, 5); len(res.FirstTokens) != 1 {
		t.Fatal("no first token on the decoder")
	}
}

func TestPrefillRoleHoldsBlocksUntilReleased(t *testing.T) {
	in := newInst(t, 100, 8192, 8)
	s := seq(in, 1, 100, 1)
	s.Hold = true
	in.Enqueue(s, 0)
	res := step(t, in, 1)
	if len(res.Finished) != 1 || in.Holding() != 1 || in.Pool().UsedBlocks() != 7 {
		t.Fatalf("finished %d holding %d used %d", len(res.Finished), in.Holding(), in.Pool().UsedBlocks())
	}
	in.Release(s)
	if in.Pool().UsedBlocks() != 0 || !in.Idle() {
		t.Fatal("blocks not returned on release")
	}
	check(t, in)
}

// kindRules are the rules of every engine kind: vLLM's newest release,
// SGLang's, and TensorRT-LLM's under each capacity scheduler policy.
func kindRules(t *testing.T) map[string]Rules {
	rules := map[string]Rules{}
	for _, k := range kindNamesTested {
		name, admission, _ := strings.Cut(k, ":")
		kind, err := ParseKind(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Preset(kind, admission)
		if err != nil {
			t.Fatal(err)
		}
		rules[k] = r.Rules
	}
	return rules
}

// kindNamesTested names kindRules' keys in order.
var kindNamesTested = []string{"vllm", "sglang", "trtllm", "trtllm:first_chunk"}

// withRules is a fresh instance like in under rules r.
func withRules(t *testing.T, in *Instance, r Rules) *Instance {
	cfg := in.Config()
	cfg.Rules = r
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// TestConservationUnderRandomLoad drives an instance of every engine kind
// with random prompts under memory pressure and checks, after every step,
// that the pool's invariants hold and that the live sequences' blocks
// (tables, sliding-window groups, and what cruising ones took) are
// exactly the pool's references.
func TestConservationUnderRandomLoad(t *testing.T) {
	rules := kindRules(t)
	for _, kind := range kindNamesTested {
		t.Run(kind, func(t *testing.T) { conserveUnderRandomLoad(t, rules[kind]) })
	}
}

func conserveUnderRandomLoad(t *testing.T, rules Rules) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 9))
		in := newInst(t, 64, 256, 16)
		if k := seed % 3; k > 0 { // hybrid: a 40-token window in one group, a 7-token one in two
			in = newHybrid(t, 64, 256, 16, []int{0, 40, 7}[k], int(k))
		}
		in = withRules(t, in, rules)
		live := map[*Seq]bool{}
		for now := int64(1); now < 400; now++ {
			if rng.IntN(3) == 0 {
				s := seq(in, uint64(now), 1+rng.IntN(200), 1+rng.IntN(100))
				if rng.IntN(2) == 0 && s.PromptTokens >= 48 {
					s.Prefix = []kv.Segment{{ID: uint64(rng.IntN(3)), Tokens: 48}}
				}
				live[s] = true
				in.Enqueue(s, 0)
			}
			if b, _ := in.Schedule(0); b != nil {
				for _, s := range in.Complete(now, now).Finished {
					delete(live, s)
				}
			}
			held := in.UncountedBlocks()
			for s := range live {
				held += in.SeqBlocks(s)
			}
			if err := in.Pool().Check(); err != nil || held != in.Pool().References() {
				t.Fatalf("seed %d step %d: %v; live sequences hold %d blocks, pool says %d references",
					seed, now, err, held, in.Pool().References())
			}
		}
	}
}
