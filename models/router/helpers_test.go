package router

import (
	"math"
	"math/rand/v2"
	"testing"
)

const testBlock = 16

// testCluster is a routing view with fixed device overlaps per instance
// index and a transfer time of latencyNs[src] + 1 ns per byte.
func testCluster(prefill, decode []View, overlap map[int]int, latencyNs map[int]int64) *Cluster {
	return &Cluster{Prefill: prefill, Decode: decode, BlockSize: testBlock,
		KVBytes: func(_, tokens int) float64 { return 1000 * float64(tokens) },
		Overlap: func(i int, hashes []uint64) int { return min(overlap[i], len(hashes)) },
		TransferNs: func(src, dst int, bytes float64) int64 {
			if src == dst {
				return 0
			}
			return latencyNs[src] + int64(bytes)
		}}
}

// request returns a request of prompt tokens with one hash per full block.
func request(prompt int) *Request {
	r := &Request{PromptTokens: prompt, OutputTokens: 1}
	for b := range prompt / testBlock {
		r.Hashes = append(r.Hashes, uint64(b+1))
	}
	return r
}

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func checkCosts(t *testing.T, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("costs %v, want %v", got, want)
	}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("costs %v, want %v", got, want)
		}
	}
}

// frequencies routes n times and counts the chosen prefill instances.
func frequencies(n int, route func() Decision) map[int]int {
	counts := map[int]int{}
	for range n {
		counts[route().Prefill]++
	}
	return counts
}
