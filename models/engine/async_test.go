package engine

import "testing"

// TestAsyncSchedulingJoinsTheStepAfterNext: with asynchronous scheduling a
// sequence enqueued while step k runs joins step k+2, for step k+1 was
// planned when step k started; synchronously it joins step k+1. When nothing
// else runs it joins the next step at once.
func TestAsyncSchedulingJoinsTheStepAfterNext(t *testing.T) {
	for _, async := range []bool{false, true} {
		cfg := Config{MaxBatchedTokens: 8192, MaxSeqs: 8, BlockSize: 16, NumBlocks: 100,
			MaxModelLen: 1 << 20, AsyncScheduling: async}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		in := New(cfg)
		a, b := seq(in, 1, 32, 10), seq(in, 2, 32, 10)
		in.Enqueue(a, 0)
		in.Schedule(0)   // step 1: a's prefill
		in.Enqueue(b, 5) // b reaches the engine during step 1
		in.Complete(0, 10)
		batch, _ := in.Schedule(10)
		if got, want := batch.PrefillSeqs, map[bool]int{false: 1, true: 0}[async]; got != want {
			t.Errorf("async %v: step 2 prefills %d sequences, want %d", async, got, want)
		}
		in.Complete(10, 20)
		if async {
			if batch, _ = in.Schedule(20); batch.PrefillSeqs != 1 {
				t.Errorf("async: step 3 prefills %d sequences, want b's 1", batch.PrefillSeqs)
			}
			in.Complete(20, 30)
		}
	}
	// Idle but for the newcomer: it is admitted at once even back to back.
	cfg := Config{MaxBatchedTokens: 8192, MaxSeqs: 8, BlockSize: 16, NumBlocks: 100,
		MaxModelLen: 1 << 20, AsyncScheduling: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	in := New(cfg)
	a, b := seq(in, 1, 32, 1), seq(in, 2, 32, 1)
	in.Enqueue(a, 0)
	in.Schedule(0)
	in.Complete(0, 10) // a finishes with its one token
	in.Enqueue(b, 5)
	if batch, _ := in.Schedule(10); batch == nil || batch.PrefillSeqs != 1 {
		t.Errorf("an otherwise idle async engine left b waiting: %+v", batch)
	}
}
