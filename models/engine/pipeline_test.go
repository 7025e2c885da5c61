package engine

import "testing"

// newPipelined is newInst with stages micro-batches in flight.
func newPipelined(t *testing.T, stages, blocks, budget, seqs int) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: budget, MaxSeqs: seqs, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, Stages: stages}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// TestMicroBatchesSkipWhatIsInFlight follows vLLM's scheduler with two
// batches in flight: a request whose scheduled tokens are all in flight
// has nothing to schedule, while one with prompt left has its next chunk
// planned behind the one in flight, at the context that chunk leaves.
func TestMicroBatchesSkipWhatIsInFlight(t *testing.T) {
	in := newPipelined(t, 2, 100, 32, 8)
	long, short := seq(in, 1, 50, 3), seq(in, 2, 10, 3)
	in.Enqueue(long, 0)
	b, _ := in.Schedule(0) // long's first 32 tokens
	if b.PrefillTokens != 32 || in.Busy() || in.InFlight() != 1 {
		t.Fatalf("first batch %+v, in flight %d, busy %v", *b, in.InFlight(), in.Busy())
	}
	in.Enqueue(short, 0)
	b, _ = in.Schedule(0) // long's next 18 behind the first chunk, short's 10 fill the budget: 28 of 32
	if b.PrefillSeqs != 2 || b.PrefillTokens != 28 || b.PrefillCtxRead != 32 || !in.Busy() {
		t.Fatalf("second batch %+v, busy %v: want long's last 18 tokens at context 32 and short's 10", *b, in.Busy())
	}
	res := in.Complete(0, 10) // the first chunk: no token yet, the rest of the prompt is in flight
	if len(res.FirstTokens) != 0 || in.Busy() {
		t.Fatalf("first chunk done: first tokens %d, busy %v", len(res.FirstTokens), in.Busy())
	}
	if b, _ = in.Schedule(10); b != nil {
		t.Fatalf("planned %+v while every running sequence's tokens are in flight", *b)
	}
	res = in.Complete(5, 20)
	if len(res.FirstTokens) != 2 {
		t.Fatalf("second batch done: %d first tokens, want both", len(res.FirstTokens))
	}
	b, _ = in.Schedule(20)
	if b.DecodeSeqs != 2 || b.PrefillSeqs != 0 {
		t.Fatalf("third batch %+v, want both decoding", *b)
	}
	check(t, in)
}

// TestPreemptedInFlightIsDiscarded: a sequence preempted while a
// micro-batch computes for it gets nothing from that micro-batch, as
// vLLM's update_from_output skips a request no longer running; one
// aborted in flight neither. Their blocks are back in the pool.
func TestPreemptedInFlightIsDiscarded(t *testing.T) {
	in := newPipelined(t, 2, 2, 64, 8) // 2 blocks of 16 tokens
	a, c := seq(in, 1, 16, 40), seq(in, 2, 16, 40)
	in.Enqueue(a, 0)
	in.Schedule(0) // a's prompt, one block
	in.Enqueue(c, 0)
	in.Schedule(0) // c's prompt, the other block
	in.Complete(0, 10)
	if a.Generated != 1 {
		t.Fatalf("a generated %d after its prompt, want 1", a.Generated)
	}
	_, res := in.Schedule(10) // a's next token needs a block: c, the last admitted, is preempted in flight
	if len(res.Preempted) != 1 || res.Preempted[0] != c {
		t.Fatalf("preempted %v, want c", res.Preempted)
	}
	res = in.Complete(5, 20) // c's prompt, computed for nothing
	if len(res.FirstTokens) != 0 || c.Generated != 0 || !c.Recovering() {
		t.Fatalf("c after its discarded micro-batch: first tokens %d, generated %d, recovering %v",
			len(res.FirstTokens), c.Generated, c.Recovering())
	}
	in.Abort(a) // a leaves with its decode token in flight
	res = in.Complete(10, 30)
	if len(res.TokenGapsNs)+len(res.FirstTokens)+len(res.Finished) != 0 || a.Generated != 1 {
		t.Fatalf("the aborted sequence got output: %+v, generated %d", *res, a.Generated)
	}
	if in.InFlight() != 0 || in.Pool().UsedBlocks() != 0 {
		t.Errorf("%d micro-batches in flight, %d blocks used, want none", in.InFlight(), in.Pool().UsedBlocks())
	}
	check(t, in)
}
