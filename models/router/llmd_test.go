package router

import (
	"math"
	"testing"
)

// llmdViews is the fixed state the scorer tests read:
//
//	view  waiting  outstanding  free/total blocks
//	20    4        6            25/100
//	21    0        2            100/100
//	22    2        2            50/100
func llmdViews() []View {
	return []View{
		{Index: 20, Waiting: 4, Outstanding: 6, FreeBlocks: 25, TotalBlocks: 100},
		{Index: 21, Waiting: 0, Outstanding: 2, FreeBlocks: 100, TotalBlocks: 100},
		{Index: 22, Waiting: 2, Outstanding: 2, FreeBlocks: 50, TotalBlocks: 100},
	}
}

func TestLLMDScores(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	l.index.Record(22, []uint64{1, 2, 3, 4}, 100)
	r := request(128) // 8 blocks, hashes 1..8
	tests := []struct {
		scorer string
		want   []float64
	}{
		{ScorerPrefixCache, []float64{0, 0, 0.5}},             // 4 of 8 blocks on 22
		{ScorerKVUtilization, []float64{0.25, 1, 0.5}},        // 1 − usage
		{ScorerQueue, []float64{0, 1, 0.5}},                   // (4 − q)/(4 − 0)
		{ScorerActiveRequest, []float64{0, 4.0 / 6, 4.0 / 6}}, // (6 − o)/6
		// 0.5·(1 − q/128): 0.5·124/128, 0.5 (empty), 0.5·126/128.
		{ScorerLoadAware, []float64{0.484375, 0.5, 0.4921875}},
	}
	for _, tc := range tests {
		checkCosts(t, l.Score(nil, tc.scorer, r, nil, llmdViews()), tc.want)
	}
	// Default weights: 2·queue + 2·kv + 3·prefix.
	checkCosts(t, l.Totals(nil, r, nil, llmdViews()), []float64{0.5, 4, 3.5})
	if got := l.Route(r, &Cluster{Prefill: llmdViews(), BlockSize: testBlock}); got != (Decision{Prefill: 21, Decode: -1, PrefillCached: 0}) {
		t.Fatalf("max-score picked %+v, want 21", got)
	}
}

func TestLLMDScoreEdges(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	same := []View{{Index: 0, Waiting: 3}, {Index: 1, Waiting: 3}}
	checkCosts(t, l.Score(nil, ScorerQueue, request(32), nil, same), []float64{1, 1})
	long := []View{{Index: 0, Waiting: 128}, {Index: 1, Waiting: 1000}}
	checkCosts(t, l.Score(nil, ScorerLoadAware, request(32), nil, long), []float64{0, 0})
	checkCosts(t, l.Score(nil, ScorerPrefixCache, request(8), nil, long), []float64{0, 0}) // no full block
	empty := []View{{Index: 0}}                                                            // no blocks at all: usage 0
	checkCosts(t, l.Score(nil, ScorerKVUtilization, request(8), nil, empty), []float64{1})
	idle := []View{{Index: 0}, {Index: 1, Outstanding: 3}} // idle scores 1; the busiest 0
	checkCosts(t, l.Score(nil, ScorerActiveRequest, request(8), nil, idle), []float64{1, 0})
	allIdle := []View{{Index: 0}, {Index: 1}}
	checkCosts(t, l.Score(nil, ScorerActiveRequest, request(8), nil, allIdle), []float64{1, 1})
}

// TestLLMDPrefixScorerStopsAt256Blocks: llm-d hashes, records and matches
// at most a prompt's first 256 blocks, so a 300-block prompt that matches
// its first 256 scores 1.
func TestLLMDPrefixScorerStopsAt256Blocks(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	r := request(300 * testBlock)
	l.record(r, &View{Index: 3, TotalBlocks: 1000})
	if n := l.index.Len(3); n != 256 {
		t.Fatalf("index holds %d blocks, want 256", n)
	}
	checkCosts(t, l.Score(nil, ScorerPrefixCache, r, nil, []View{{Index: 3}}), []float64{1})
}

// TestLLMDLRUSizedFromThePool: with no capacity given, an instance's LRU
// holds as many blocks as its KV pool (llm-d's auto-tuned scorer).
func TestLLMDLRUSizedFromThePool(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	l.record(request(64*testBlock), &View{Index: 0, TotalBlocks: 10})
	if n := l.index.Len(0); n != 10 {
		t.Fatalf("LRU holds %d blocks, want the pool's 10", n)
	}
}

func TestLLMDWeightedRandomPicker(t *testing.T) {
	cfg := DefaultLLMDConfig()
	cfg.Scorers, cfg.Picker = []WeightedScorer{{ScorerQueue, 1}}, PickerWeightedRandom
	l := NewLLMD(cfg, seeded())
	// Queue scores 0, 1, 1/2: probabilities 0, 2/3, 1/3.
	c := &Cluster{Prefill: llmdViews(), BlockSize: testBlock}
	const n = 60000
	got := frequencies(n, func() Decision { return l.Route(request(32), c) })
	if got[20] != 0 || math.Abs(float64(got[21])/n-2.0/3) > 0.01 {
		t.Fatalf("choices %v, want 21 two thirds of the time, 22 one third", got)
	}
}

func TestLLMDPrefixDecider(t *testing.T) {
	pre := []View{{Index: 0, Waiting: 1, TotalBlocks: 100}, {Index: 1, TotalBlocks: 100}}
	dec := []View{{Index: 2, TotalBlocks: 100}}
	tests := []struct {
		name      string
		threshold int
		repeat    bool // route the same prompt twice: the decoder then holds 6 of its blocks
		want      Decision
	}{
		{"0 never disaggregates", 0, false, Decision{Prefill: 2, Decode: -1, PrefillCached: 0}},
		{"100 uncached ≥ 64", 64, false, Decision{Prefill: 1, Decode: 2, PrefillCached: 0}},    // the queue scorer picks prefiller 1
		{"100 uncached < 101", 101, false, Decision{Prefill: 2, Decode: -1, PrefillCached: 0}}, //
		{"4 uncached after a repeat", 64, true, Decision{Prefill: 2, Decode: -1, PrefillCached: 0}},
		{"4 uncached ≥ 4", 4, true, Decision{Prefill: 1, Decode: 2, PrefillCached: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultLLMDConfig()
			cfg.NonCachedTokens = tc.threshold
			l := NewLLMD(cfg, seeded())
			c := &Cluster{Prefill: pre, Decode: dec, BlockSize: testBlock}
			if tc.repeat {
				l.Route(request(100), c)
			}
			if got := l.Route(request(100), c); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewLLMDPanicsOnUnknownNames(t *testing.T) {
	for _, cfg := range []LLMDConfig{
		{Scorers: []WeightedScorer{{"nope", 1}}, Picker: PickerMaxScore, LRUCapacityPerServer: 1},
		{Scorers: []WeightedScorer{{ScorerQueue, -1}}, Picker: PickerMaxScore, LRUCapacityPerServer: 1},
		{Picker: "nope", LRUCapacityPerServer: 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", cfg)
				}
			}()
			NewLLMD(cfg, seeded())
		}()
	}
}
