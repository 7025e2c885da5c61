package router

import "testing"

// TestLLMDRunningRequestsScores: (max − r)/(max − min) over the running
// counts 3, 0, 1, and 1 each when they are equal.
func TestLLMDRunningRequestsScores(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	vs := []View{{Index: 0, Running: 3}, {Index: 1, Running: 0}, {Index: 2, Running: 1}}
	checkCosts(t, l.Score(nil, ScorerRunningRequests, request(32), nil, vs), []float64{0, 1, 2.0 / 3})
	same := []View{{Index: 0, Running: 2}, {Index: 1, Running: 2}}
	checkCosts(t, l.Score(nil, ScorerRunningRequests, request(32), nil, same), []float64{1, 1})
}

// TestLLMDNoHitLRUSpreadsColdRequests: on four idle instances scored by
// no-hit-LRU alone, cold requests go round the fleet, least recently used
// first, each step's scores the closed form 1 − rank/3.
func TestLLMDNoHitLRUSpreadsColdRequests(t *testing.T) {
	cfg := DefaultLLMDConfig()
	cfg.Scorers = []WeightedScorer{{ScorerNoHitLRU, 1}}
	l := NewLLMD(cfg, seeded())
	c := &Cluster{Prefill: []View{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}, BlockSize: testBlock}
	steps := []struct {
		want   []float64
		choice int
	}{
		{[]float64{1, 2.0 / 3, 1.0 / 3, 0}, 0}, // none used: in listed order
		{[]float64{0, 1, 2.0 / 3, 1.0 / 3}, 1}, // 0 used: after the three never used
		{[]float64{1.0 / 3, 0, 1, 2.0 / 3}, 2},
		{[]float64{2.0 / 3, 1.0 / 3, 0, 1}, 3},
		{[]float64{1, 2.0 / 3, 1.0 / 3, 0}, 0}, // all used: least recently first
	}
	for i, s := range steps {
		r := request(8) // no full block: cold everywhere
		checkCosts(t, l.Score(nil, ScorerNoHitLRU, r, c, c.Prefill), s.want)
		if d := l.Route(r, c); d.Prefill != s.choice {
			t.Fatalf("step %d: routed to %d, want %d", i, d.Prefill, s.choice)
		}
	}
}

// TestLLMDNoHitLRUEdges: a request some candidate holds a block of scores
// 0.5 everywhere and leaves the LRU alone; a lone candidate scores 1; the
// LRU's position counts instances that are not candidates (score clamped
// at 0); the LRU keeps at most its size.
func TestLLMDNoHitLRUEdges(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	l.index.Record(1, []uint64{1}, 10)
	vs := []View{{Index: 0}, {Index: 1}}
	checkCosts(t, l.Score(nil, ScorerNoHitLRU, request(32), nil, vs), []float64{0.5, 0.5})
	checkCosts(t, l.Score(nil, ScorerNoHitLRU, request(8), nil, vs[:1]), []float64{1})
	l.noHit.used(9, 4)
	l.noHit.used(1, 4)
	checkCosts(t, l.Score(nil, ScorerNoHitLRU, request(8), nil, vs), []float64{1, 0}) // 1: rank 1 + 1
	for i := range 6 {
		l.noHit.used(i, 3)
	}
	if got := l.noHit.order; len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Fatalf("LRU %v, want [3 4 5]", got)
	}
}

// TestLLMDNoHitLRUDisaggregated: a cold request moves its decoder, then
// its prefiller, to the front.
func TestLLMDNoHitLRUDisaggregated(t *testing.T) {
	cfg := DefaultLLMDConfig()
	cfg.Scorers, cfg.NonCachedTokens = []WeightedScorer{{ScorerNoHitLRU, 1}}, 1
	l := NewLLMD(cfg, seeded())
	c := &Cluster{Prefill: []View{{Index: 0}, {Index: 1}}, Decode: []View{{Index: 2}, {Index: 3}}, BlockSize: testBlock}
	if d := l.Route(request(8), c); d != (Decision{Prefill: 0, Decode: 2}) {
		t.Fatalf("routed %+v, want prefill 0, decode 2", d)
	}
	if got := l.noHit.order; len(got) != 2 || got[0] != 2 || got[1] != 0 {
		t.Fatalf("LRU %v, want [2 0]", got)
	}
}

// TestLLMDPrefixAffinityFilter: on three instances holding 8, 6 and 0 of
// a request's 8 blocks, the filter at 0.7 keeps 0 and 1 and the queue
// scorer normalises over them alone (waiting 4 and 2: 0 scores 0, 1
// scores 1), so 1 wins, though 2, waiting 0, would win unfiltered; at
// 0.9 only 0 passes; at 1 with exploration 1 every candidate does.
func TestLLMDPrefixAffinityFilter(t *testing.T) {
	vs := []View{{Index: 0, Waiting: 4}, {Index: 1, Waiting: 2}, {Index: 2, Waiting: 0}}
	route := func(f *PrefixAffinity) int {
		cfg := DefaultLLMDConfig()
		cfg.Scorers, cfg.PrefixAffinity = []WeightedScorer{{ScorerQueue, 1}}, f
		l := NewLLMD(cfg, seeded())
		l.index.Record(0, []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 100)
		l.index.Record(1, []uint64{1, 2, 3, 4, 5, 6}, 100)
		return l.Route(request(8*testBlock), &Cluster{Prefill: vs, BlockSize: testBlock}).Prefill
	}
	for _, tc := range []struct {
		f    *PrefixAffinity
		want int
	}{
		{nil, 2},
		{&PrefixAffinity{AffinityThreshold: 0.7}, 1},
		{&PrefixAffinity{AffinityThreshold: 0.9}, 0},
		{&PrefixAffinity{AffinityThreshold: 1, ExplorationProbability: 1}, 2},
		{&PrefixAffinity{AffinityThreshold: 0}, 2}, // 0: off
	} {
		if got := route(tc.f); got != tc.want {
			t.Errorf("filter %+v: routed to %d, want %d", tc.f, got, tc.want)
		}
	}
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	l.cfg.PrefixAffinity = &PrefixAffinity{AffinityThreshold: 0.5}
	if out, kept := l.affinityFilter(request(8*testBlock), vs); len(out) != 3 || kept != nil {
		t.Errorf("no candidate sticky: kept %v, want all", kept)
	}
}

// TestLLMDTokenLoadScores: 1 − min(load, threshold)/threshold, 1 when
// idle, 0 past the threshold; a request's estimate is its prompt plus
// 1.5 × its prompt, rounded.
func TestLLMDTokenLoadScores(t *testing.T) {
	cfg := DefaultLLMDConfig()
	cfg.TokenLoadThreshold = 1000
	l := NewLLMD(cfg, seeded())
	vs := []View{{Index: 0}, {Index: 1, TokenLoad: 250}, {Index: 2, TokenLoad: 1000}, {Index: 3, TokenLoad: 5000}}
	checkCosts(t, l.Score(nil, ScorerTokenLoad, request(32), nil, vs), []float64{1, 0.75, 0, 0})
	def := NewLLMD(DefaultLLMDConfig(), seeded())
	checkCosts(t, def.Score(nil, ScorerTokenLoad, request(32), nil, []View{{TokenLoad: 4194304 / 4}}), []float64{0.75})
	if got := EstimatedTokens(101); got != 101+152 { // round(151.5) = 152
		t.Errorf("EstimatedTokens(101) = %d, want 253", got)
	}
}

// TestLLMDSessionAffinityScores: a session's next turn scores 1 on the
// instance that served its last turn (the decoder under P/D) and 0
// elsewhere; a request of no session, or of a session not yet served,
// scores 0 everywhere; with the scorer alone the turn goes back there.
func TestLLMDSessionAffinityScores(t *testing.T) {
	cfg := DefaultLLMDConfig()
	cfg.Scorers = []WeightedScorer{{ScorerSessionAffinity, 1}, {ScorerQueue, 0.5}}
	l := NewLLMD(cfg, seeded())
	vs := []View{{Index: 0}, {Index: 1, Waiting: 4}, {Index: 2, Waiting: 2}}
	turn := func(n uint16) *Request { r := request(32); r.Session, r.Turn = 7, n; return r }
	checkCosts(t, l.Score(nil, ScorerSessionAffinity, turn(1), nil, vs), []float64{0, 0, 0})
	l.sessions.served(turn(1), 2)
	checkCosts(t, l.Score(nil, ScorerSessionAffinity, turn(2), nil, vs), []float64{0, 0, 1})
	other := turn(2)
	other.Session = 8
	checkCosts(t, l.Score(nil, ScorerSessionAffinity, other, nil, vs), []float64{0, 0, 0})
	checkCosts(t, l.Score(nil, ScorerSessionAffinity, request(32), nil, vs), []float64{0, 0, 0})

	// Totals 0 + 0.5, 0 + 0, 1 + 0.25: the served instance wins over the
	// emptier one, and the decision is remembered for the turn after.
	if d := l.Route(turn(2), &Cluster{Prefill: vs, BlockSize: testBlock}); d.Prefill != 2 {
		t.Fatalf("turn 2 routed to %d, want 2", d.Prefill)
	}
	pd := &Cluster{Prefill: []View{{Index: 3}}, Decode: vs, BlockSize: testBlock}
	l.sessions.served(turn(2), 0)
	if d := l.Route(turn(3), pd); d.Prefill != 0 || l.sessions[7] != 0 {
		t.Errorf("P/D turn 3: %+v, remembered %d; want the decoder 0 (prefilled locally)", d, l.sessions[7])
	}
}

// TestLLMDContextLengthScores: llm-d's context-length-aware values on a
// fleet of [0, 2048], [2048, 8192], a point range [100, 100] and one
// without a range, for prompts of 100, 1000 and 9000 tokens:
//
//	100 in [0, 2048]:     0.3 + 0.7·(0.7/(1 + 0.2048) + 0.3·1948/2048)
//	100 below [2048, ..]: 0.3/(1 + 1948/1000)
//	9000 above 8192:      0.3/(1 + 808/1000)
func TestLLMDContextLengthScores(t *testing.T) {
	ranges := map[int][2]int{0: {0, 2048}, 1: {2048, 8192}, 2: {100, 100}}
	c := &Cluster{BlockSize: testBlock, ContextRange: func(i int) (int, int, bool) {
		r, ok := ranges[i]
		return r[0], r[1], ok
	}}
	vs := []View{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	in := func(n, lo, hi float64) float64 { return 0.3 + 0.7*(0.7/(1+(hi-lo)/10000)+0.3*(hi-n)/(hi-lo)) }
	checkCosts(t, l.Score(nil, ScorerContextLength, request(100), c, vs),
		[]float64{in(100, 0, 2048), 0.3 / (1 + 1.948), 1, 0.5})
	checkCosts(t, l.Score(nil, ScorerContextLength, request(1000), c, vs),
		[]float64{in(1000, 0, 2048), 0.3 / (1 + 1.048), 0.3 / (1 + 0.9), 0.5})
	checkCosts(t, l.Score(nil, ScorerContextLength, request(9000), c, vs),
		[]float64{0.3 / (1 + 6.952), 0.3 / (1 + 0.808), 0.3 / (1 + 8.9), 0.5})
	checkCosts(t, l.Score(nil, ScorerContextLength, request(9000), &Cluster{}, vs), []float64{0.5, 0.5, 0.5, 0.5})
}

// TestLLMDContextLengthFilter: with the filter, a request goes only to a
// candidate whose range holds it, or one without a range; with none left,
// it is rejected; without the filter the scorer alone prefers the fit.
func TestLLMDContextLengthFilter(t *testing.T) {
	ranges := map[int][2]int{0: {0, 2048}, 1: {2048, 8192}}
	fleet := func(unranged bool) *Cluster {
		vs := []View{{Index: 0}, {Index: 1, Waiting: 9}}
		if unranged {
			vs = append(vs, View{Index: 2, Waiting: 9})
		}
		return &Cluster{Prefill: vs, BlockSize: testBlock, ContextRange: func(i int) (int, int, bool) {
			r, ok := ranges[i]
			return r[0], r[1], ok
		}}
	}
	cfg := DefaultLLMDConfig()
	cfg.Scorers = []WeightedScorer{{ScorerQueue, 1}}
	cfg.ContextLengthFilter = true
	l := NewLLMD(cfg, seeded())
	if d := l.Route(request(4000), fleet(false)); d.Prefill != 1 { // the queue scorer alone would pick 0
		t.Errorf("4,000 tokens: routed to %d, want 1", d.Prefill)
	}
	if d := l.Route(request(9000), fleet(false)); !d.IsRejected() {
		t.Errorf("9,000 tokens, no range holds it: %+v, want rejected", d)
	}
	if d := l.Route(request(9000), fleet(true)); d.Prefill != 2 {
		t.Errorf("9,000 tokens with an unranged candidate: routed to %d, want 2", d.Prefill)
	}
	cfg.ContextLengthFilter = false
	cfg.Scorers = []WeightedScorer{{ScorerContextLength, 1}}
	if d := NewLLMD(cfg, seeded()).Route(request(4000), fleet(false)); d.Prefill != 1 {
		t.Errorf("scorer only, 4,000 tokens: routed to %d, want 1", d.Prefill)
	}
}
