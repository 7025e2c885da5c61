package engine

import "testing"

// stepAt plans a step at startNs and completes it at endNs.
func stepAt(t *testing.T, in *Instance, startNs, endNs int64) {
	t.Helper()
	if b, _ := in.Schedule(startNs); b == nil {
		t.Fatalf("nothing scheduled at %d", startNs)
	}
	in.Complete(startNs, endNs)
}

// TestWaitCauses: each cause by hand. Steps run 100 ns each.
func TestWaitCauses(t *testing.T) {
	t.Run("max_num_seqs", func(t *testing.T) {
		in := newInst(t, 100, 4096, 1) // one running sequence at a time
		a, b := seq(in, 1, 16, 2), seq(in, 2, 16, 1)
		in.Enqueue(a, 0)
		in.Enqueue(b, 0)
		stepAt(t, in, 0, 100)   // a prefills; b waits: the running set is full
		stepAt(t, in, 100, 200) // a decodes its last token and finishes
		stepAt(t, in, 200, 300) // b is admitted at 200
		if b.Wait != (Waits{WaitMaxSeqs: 200}) {
			t.Errorf("b waited %v, want 200 ns for max_num_seqs", b.Wait)
		}
		if in.Stats().Waits != b.Wait {
			t.Errorf("instance totals %v, want b's", in.Stats().Waits)
		}
	})
	t.Run("kv blocks", func(t *testing.T) {
		in := newInst(t, 2, 4096, 8) // 2 blocks: a takes both
		a, b := seq(in, 1, 32, 1), seq(in, 2, 16, 1)
		in.Enqueue(a, 0)
		in.Enqueue(b, 0)
		stepAt(t, in, 0, 100) // a prefills and finishes; b found no block at 0
		stepAt(t, in, 100, 200)
		if b.Wait != (Waits{WaitKV: 100}) {
			t.Errorf("b waited %v, want 100 ns for KV blocks", b.Wait)
		}
	})
	t.Run("token budget", func(t *testing.T) {
		in := newInst(t, 100, 16, 8) // 16 tokens a step: a's prompt takes them all
		a, b := seq(in, 1, 32, 1), seq(in, 2, 16, 1)
		in.Enqueue(a, 0)
		in.Enqueue(b, 0)
		stepAt(t, in, 0, 100)   // a's first chunk
		stepAt(t, in, 100, 200) // a's second chunk: the budget is spent again
		stepAt(t, in, 200, 300) // b is admitted at 200
		if b.Wait != (Waits{WaitBudget: 200}) {
			t.Errorf("b waited %v, want 200 ns for the token budget", b.Wait)
		}
	})
	t.Run("busy", func(t *testing.T) {
		in := newInst(t, 100, 4096, 8)
		a, b := seq(in, 1, 16, 2), seq(in, 2, 16, 1)
		in.Enqueue(a, 0)
		in.Schedule(0) // a's step runs 0–100; b arrives at 30
		in.Enqueue(b, 30)
		in.Complete(0, 100)
		stepAt(t, in, 100, 200)
		if b.Wait != (Waits{WaitBusy: 70}) {
			t.Errorf("b waited %v, want 70 ns for the step in flight", b.Wait)
		}
	})
}
