package network

import (
	"slices"
	"testing"
)

// run starts the given transfers at t=0 and returns each one's completion
// time by stepping the network from event to event.
func run(t *testing.T, n *Network, starts []struct {
	path  []int32
	bytes float64
}) []int64 {
	t.Helper()
	for i, s := range starts {
		n.Start(int32(i), s.path, 1000, s.bytes, 0)
	}
	doneAt := make([]int64, len(starts))
	for n.Active() > 0 {
		now := n.NextNs()
		for _, ref := range n.Advance(now, nil) {
			doneAt[ref] = now
		}
	}
	return doneAt
}

type start = struct {
	path  []int32
	bytes float64
}

func TestSingleTransferIsLatencyPlusBytesOverBandwidth(t *testing.T) {
	n := New([]float64{50e9}) // 50 GB/s = 50 bytes/ns
	got := run(t, n, []start{{[]int32{0}, 5e6}})
	// 5e6 B / 50 B/ns = 100,000 ns, plus 1,000 ns latency.
	if want := int64(101_000); got[0] != want {
		t.Fatalf("done at %d ns, want %d", got[0], want)
	}
}

func TestTwoEqualTransfersOnOneLinkTakeTwiceAsLong(t *testing.T) {
	n := New([]float64{50e9})
	got := run(t, n, []start{{[]int32{0}, 5e6}, {[]int32{0}, 5e6}})
	if want := []int64{201_000, 201_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
}

func TestPathIsLimitedByItsSlowestLink(t *testing.T) {
	n := New([]float64{450e9, 50e9}) // NVLink then InfiniBand
	got := run(t, n, []start{{[]int32{0, 1}, 5e6}})
	if want := int64(101_000); got[0] != want {
		t.Fatalf("done at %d ns, want %d (IB-bound)", got[0], want)
	}
}

func TestMaxMinGivesLeftoverToUnconstrainedFlow(t *testing.T) {
	// Flows A (links 0,1) and B (link 1) share link 1 (100 B/ns); A is capped
	// at 20 B/ns by link 0, so B gets 80. A: 2e6/20 = 100,000 ns. B: 8e6 at
	// 80 = 100,000 ns too.
	n := New([]float64{20e9, 100e9})
	got := run(t, n, []start{{[]int32{0, 1}, 2e6}, {[]int32{1}, 8e6}})
	if want := []int64{101_000, 101_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
}

func TestShortFlowFinishingSpeedsUpTheOther(t *testing.T) {
	// Two flows on a 50 B/ns link: 1e6 and 3e6 bytes. Shared at 25 B/ns, the
	// short one drains at 40,000 ns; the long one has 2e6 left at full rate:
	// 40,000 more ns → 80,000 ns. Both plus 1,000 ns latency.
	n := New([]float64{50e9})
	got := run(t, n, []start{{[]int32{0}, 1e6}, {[]int32{0}, 3e6}})
	if want := []int64{41_000, 81_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
	if busy := n.Stats(0).BusyNs; busy != 80_000 {
		t.Fatalf("busy %d ns, want 80000", busy)
	}
}

func TestZeroByteTransferTakesOnlyLatency(t *testing.T) {
	n := New([]float64{50e9})
	got := run(t, n, []start{{[]int32{0}, 0}})
	if got[0] != 1000 {
		t.Fatalf("done at %d, want 1000", got[0])
	}
}

func TestPredictSplitsTheBusiestLinkWithTheNewTransfer(t *testing.T) {
	n := New([]float64{100e9, 50e9}) // 100 and 50 bytes/ns
	if got := n.PredictNs([]int32{0, 1}, 1000, 5e6); got != 101_000 {
		t.Fatalf("idle: %d ns, want 1000 + 5e6/50", got)
	}
	n.Start(0, []int32{1}, 0, 1e9, 0) // one transfer already on link 1
	if got := n.PredictNs([]int32{0, 1}, 1000, 5e6); got != 201_000 {
		t.Fatalf("shared: %d ns, want 1000 + 5e6/25", got)
	}
}

// TestACompletionOverdueAtAStartIsNotInThePast: a transfer that sped up
// when another drained, and so ran out its latency before the completion
// predicted at the old rates, completes at the next call, not in the
// past.
func TestACompletionOverdueAtAStartIsNotInThePast(t *testing.T) {
	n := New([]float64{1e9})               // 1 byte/ns
	n.Start(1, []int32{0}, 10_000, 100, 0) // drains at 200 (half rate), done at 10,200
	n.Start(2, []int32{0}, 0, 300, 0)      // predicted at half rate: done at 600; alone after 200: at 400
	if next := n.NextNs(); next != 600 {
		t.Fatalf("next = %d, want 600 (the rates of the moment)", next)
	}
	n.Start(3, []int32{0}, 0, 100, 500)
	if next := n.NextNs(); next != 500 {
		t.Errorf("next = %d after a start at 500, want 500 (overdue since 400)", next)
	}
	if done := n.Advance(500, nil); len(done) != 1 || done[0] != 2 {
		t.Errorf("done at 500: %v, want [2]", done)
	}
}
