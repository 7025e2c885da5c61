package engine

import "testing"

// cdiv is ⌈a/b⌉.
func cdiv(a, b int) int { return (a + b - 1) / b }

// windowBlocks is what vLLM's hybrid manager holds for a step computing up
// to tokens from computed, with gpt-oss-120b's window of 128 in 16-token
// blocks and one group of each kind: the table, and the table less the
// blocks that slid out.
func windowBlocks(computed, tokens int) int {
	return 2*cdiv(tokens, 16) - max(0, computed-127)/16
}

// TestSlidingWindowHoldsTheWindow follows one gpt-oss-like sequence: its
// prefill chunk holds both groups' blocks for the whole chunk, and from its
// first decode step the sliding group keeps 8 or 9 blocks; cruising or
// not, the pool holds exactly that after every plan.
func TestSlidingWindowHoldsTheWindow(t *testing.T) {
	in := newHybrid(t, 2000, 8192, 8, 128, 1)
	s := seq(in, 1, 1000, 300)
	in.Enqueue(s, 0)
	in.Schedule(0)
	if got := in.Pool().UsedBlocks(); got != 126 { // 63 + 63, within vLLM's cdiv(127+1000, 16)+1 = 72 per group
		t.Fatalf("prefill chunk holds %d blocks, want 126", got)
	}
	in.Complete(0, 1)
	for step := range 299 {
		c := 1000 + step // computed before this step
		in.Schedule(0)
		if got, want := in.Pool().UsedBlocks(), windowBlocks(c, c+1); got != want {
			t.Fatalf("decode from %d tokens: %d blocks used, want %d", c, got, want)
		}
		if sliding := in.Pool().UsedBlocks() - cdiv(c+1, 16); sliding != 8 && sliding != 9 {
			t.Fatalf("decode from %d tokens: the window holds %d blocks", c, sliding)
		}
		res := in.Complete(int64(step+1), int64(step+2))
		if step == 298 && len(res.Finished) != 1 {
			t.Fatal("the sequence did not finish")
		}
	}
	if in.Pool().UsedBlocks() != 0 {
		t.Errorf("%d blocks still used after the sequence finished", in.Pool().UsedBlocks())
	}
	check(t, in)
}

// TestSlidingWindowRoles: a decode-role sequence reserves its prompt's
// table and last window only; a prefill-role one frees what slid out as it
// finishes, holding the window for the transfer.
func TestSlidingWindowRoles(t *testing.T) {
	in := newHybrid(t, 2000, 8192, 8, 128, 1)
	d := seq(in, 1, 1000, 5)
	d.Remote = true
	in.Enqueue(d, 0)
	_, res := in.Schedule(0)
	if len(res.Pulls) != 1 || in.Pool().UsedBlocks() != windowBlocks(1000, 1000) { // 63 + 9
		t.Fatalf("pulls %d, %d blocks reserved, want %d", len(res.Pulls), in.Pool().UsedBlocks(), windowBlocks(1000, 1000))
	}
	in.KVArrived(d, 1)
	in.Schedule(0)
	if got := in.Pool().UsedBlocks(); got != 72 { // the step from 999 tokens needs nothing more
		t.Fatalf("first decode step holds %d blocks, want 72", got)
	}

	p := newHybrid(t, 2000, 8192, 8, 128, 1)
	h := seq(p, 2, 1000, 1)
	h.Hold = true
	p.Enqueue(h, 0)
	p.Schedule(0)
	if res := p.Complete(0, 1); len(res.Finished) != 1 || p.Pool().UsedBlocks() != 72 {
		t.Fatalf("finished %d, held %d blocks, want 72", len(res.Finished), p.Pool().UsedBlocks())
	}
	p.Release(h)
	if p.Pool().UsedBlocks() != 0 {
		t.Errorf("%d blocks used after the release", p.Pool().UsedBlocks())
	}
	check(t, p)
}

// TestSlidingWindowLongContext: a pool of 6800 two-group blocks holds one
// 100,000-token sequence through its chunked prefill and its decode —
// 6250 blocks of table, at most 521 of window while a chunk of 8192 runs —
// where a pool holding every layer in each block would need 6250 blocks of
// twice the size.
func TestSlidingWindowLongContext(t *testing.T) {
	in := newHybrid(t, 6800, 8192, 8, 128, 1)
	cfg := in.Config()
	if got := cfg.CapacityTokens(); got != (6800-521)*16 {
		t.Fatalf("capacity %d tokens, want (6800 − 521)·16 = 100464", got)
	}
	if got := cfg.BlocksHeld(100000); got != 6250+9 {
		t.Errorf("BlocksHeld(100000) = %d, want 6259", got)
	}
	s := seq(in, 1, 99990, 10)
	in.Enqueue(s, 0)
	peak := 0
	for c, now := 0, int64(1); !s.Finished(); now++ {
		n := max(1, min(8192, 99990-c)) // a prefill chunk, or a decode token
		if b, _ := in.Schedule(0); b == nil {
			t.Fatal("nothing scheduled")
		}
		if got, want := in.Pool().UsedBlocks(), windowBlocks(c, c+n); got != want {
			t.Fatalf("step from %d tokens computing %d: %d blocks used, want %d", c, n, got, want)
		}
		peak = max(peak, in.Pool().UsedBlocks())
		in.Complete(now, now+1)
		c += n
	}
	if s.Preemptions != 0 || peak > 6250+521 {
		t.Errorf("%d preemptions, peak %d blocks", s.Preemptions, peak)
	}
	check(t, in)
}

// TestSlidingConfigValidated: window and groups come together, and not in
// slot mode.
func TestSlidingConfigValidated(t *testing.T) {
	for _, c := range []Config{
		{SlidingWindow: 128},
		{SlidingGroups: 1},
		{SlidingWindow: -1, SlidingGroups: 1},
		{SlidingWindow: 128, SlidingGroups: 1, Layouts: [][]SlotClass{{{Count: 1, ContextTokens: 100}}}},
	} {
		c.MaxBatchedTokens, c.MaxSeqs, c.NumBlocks, c.MaxModelLen = 64, 4, 10, 100
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
