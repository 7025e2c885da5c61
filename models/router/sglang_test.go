package router

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"handoff/models/kv"
)

// sgViews returns colocated views of instances 0, 1, … with the given
// requests in flight.
func sgViews(loads ...int) []View {
	vs := make([]View, len(loads))
	for i, n := range loads {
		vs[i] = View{Index: i, Routed: n}
	}
	return vs
}

// sgRequest is request id's prompt of prompt tokens behind prefix
// segments.
func sgRequest(id int64, prompt int, prefix ...kv.Segment) *Request {
	return &Request{ID: id, PromptTokens: prompt, OutputTokens: 1, Prefix: prefix}
}

func sgRoute(s *SGLang, r *Request, nowNs int64, vs []View) int {
	return s.Route(r, &Cluster{Prefill: vs, NowNs: nowNs}).Prefill
}

// TestSGLangCacheAwareBalanced: with the load balanced, a prompt whose
// match exceeds cache_threshold goes to the worker holding it whatever
// its load; one at or below it goes to the least loaded worker.
func TestSGLangCacheAwareBalanced(t *testing.T) {
	s := NewSGLang(DefaultSGLangConfig(), seeded())
	sys := kv.Segment{ID: 1, Tokens: 100}
	steps := []struct {
		r     *Request
		loads []int
		want  int
		why   string
	}{
		{sgRequest(1, 120, sys), []int{2, 0, 1}, 1, "empty tree: match 0, the least loaded"},
		{sgRequest(2, 110, sys), []int{2, 5, 1}, 1, "match 100/110 > 0.3: the holder, at the most load"},
		{sgRequest(3, 300, kv.Segment{ID: 2, Tokens: 100}), []int{2, 5, 1}, 2, "match 0: the least loaded"},
		{sgRequest(4, 200, kv.Segment{ID: 1, Tokens: 30}), []int{2, 5, 1}, 2, "match 30/200 = 0.15: the least loaded"},
		{sgRequest(5, 100, kv.Segment{ID: 1, Tokens: 30}), []int{2, 5, 1}, 2, "match 30/100 = 0.3, not above: the least loaded"},
		{sgRequest(6, 99, kv.Segment{ID: 1, Tokens: 30}), []int{2, 5, 3}, 1,
			"match 30/99 > 0.3 ends at the node request 4 split off: the holder it inherited (last_tenant), 1, not 4's and 5's 2"},
		{sgRequest(7, 40, kv.Segment{ID: 1, Tokens: 40}), []int{0, 5, 9}, 1, "match 40/40, ending inside a node: its holder"},
	}
	for i, st := range steps {
		if got := sgRoute(s, st.r, 0, sgViews(st.loads...)); got != st.want {
			t.Errorf("step %d (%s): routed to %d, want %d", i, st.why, got, st.want)
		}
	}
}

// TestSGLangCacheAwareImbalanced: load is imbalanced only when the
// spread exceeds balance_abs_threshold and the most exceeds
// balance_rel_threshold × the least; then the least loaded worker wins
// over a full match, and the prompt is still recorded under it.
func TestSGLangCacheAwareImbalanced(t *testing.T) {
	sys := kv.Segment{ID: 1, Tokens: 1000}
	for _, c := range []struct {
		loads []int
		want  int
		why   string
	}{
		{[]int{70, 0, 3}, 1, "spread 70 > 64, 70 > 1.5 × 0: the least loaded"},
		{[]int{230, 160, 200}, 0, "spread 70 > 64 but 230 ≤ 1.5 × 160: the match"},
		{[]int{64, 0, 0}, 0, "spread 64, not above: the match"},
		{[]int{171, 106, 200}, 1, "spread 94 > 64, 200 > 159: the least loaded"},
	} {
		s := NewSGLang(DefaultSGLangConfig(), seeded())
		sgRoute(s, sgRequest(1, 1000, sys), 0, sgViews(0, 0, 0)) // records sys under 0
		if got := sgRoute(s, sgRequest(2, 1000, sys), 0, sgViews(c.loads...)); got != c.want {
			t.Errorf("loads %v (%s): routed to %d, want %d", c.loads, c.why, got, c.want)
		}
		if c.want != 0 {
			if m, inst := s.legs[0].tree.match(appendPrompt(nil, sgRequest(3, 1000, sys))); m != 1000 || inst != 0 {
				t.Errorf("loads %v: the tree matches %d tokens at %d, want 1000 at 0", c.loads, m, inst)
			}
			if got := s.legs[0].tree.size[c.want]; got != 1000 {
				t.Errorf("loads %v: the shortest queue's tree holds %d tokens, want 1000", c.loads, got)
			}
		}
	}
}

// TestSGLangSmallestTreeOnMiss: sgl-router's choice below the threshold
// is the worker whose tree holds the fewest tokens, whatever its load.
func TestSGLangSmallestTreeOnMiss(t *testing.T) {
	cfg := DefaultSGLangConfig()
	cfg.CacheMiss = SGLangMissSmallestTree
	s := NewSGLang(cfg, seeded())
	want := []int{0, 1, 2, 2, 1} // sizes 0,0,0 → 500,0,0 → 500,300,0 → 500,300,100 → 500,300,300
	for i, n := range []int{500, 300, 100, 200, 50} {
		if got := sgRoute(s, sgRequest(int64(i), n), 0, sgViews(9, 5, 7)); got != want[i] {
			t.Errorf("request %d: routed to %d, want %d (tree sizes %v)", i, got, want[i], s.legs[0].tree.size)
		}
	}
}

// TestSGLangEviction: at each eviction_interval a worker's tree over
// max_tree_size characters loses its least recently used leaves, and a
// node no worker holds leaves the tree.
func TestSGLangEviction(t *testing.T) {
	cfg := DefaultSGLangConfig()
	cfg.EvictionInterval, cfg.MaxTreeSize = 1e9, 4*250 // 250 tokens
	s := NewSGLang(cfg, seeded())
	a, b := kv.Segment{ID: 1, Tokens: 100}, kv.Segment{ID: 2, Tokens: 100}
	vs := sgViews(0)
	sgRoute(s, sgRequest(1, 150, a), 0, vs)   // leaf a+50
	sgRoute(s, sgRequest(2, 150, b), 0, vs)   // leaf b+50, used later
	sgRoute(s, sgRequest(3, 120, a), 5e8, vs) // a splits off: a, under it 50 and 20 of own text
	tree := s.legs[0].tree
	if got := tree.size[0]; got != 320 {
		t.Fatalf("before eviction the tree holds %d tokens, want 320", got)
	}
	// At 1 s, before request 4, eviction: the leaves by last use are
	// request 1's own 50, b+50, request 3's own 20; a (100) is inner.
	// 320 − 50 = 270 > 250, − 150 = 120 ≤ 250: stop.
	sgRoute(s, sgRequest(4, 10, kv.Segment{ID: 3, Tokens: 10}), 1e9, vs)
	if got := tree.size[0]; got != 120+10 {
		t.Errorf("after eviction (and request 4) the tree holds %d tokens, want 130", got)
	}
	for _, c := range []struct {
		r    *Request
		want int
	}{{sgRequest(2, 150, b), 0}, {sgRequest(1, 150, a), 100}, {sgRequest(3, 120, a), 120}} {
		if m, _ := tree.match(appendPrompt(nil, c.r)); m != c.want {
			t.Errorf("request %d matches %d tokens after eviction, want %d", c.r.ID, m, c.want)
		}
	}
	if _, ok := tree.root.children[sgKey{id: 2}]; ok {
		t.Errorf("b's node, held by no worker, is still in the tree")
	}
}

// TestSGLangGoneWorker: a match held by a worker no longer in the leg
// removes it from the tree and sends the request to the leg's first
// worker, as upstream.
func TestSGLangGoneWorker(t *testing.T) {
	s := NewSGLang(DefaultSGLangConfig(), seeded())
	sys := kv.Segment{ID: 1, Tokens: 100}
	sgRoute(s, sgRequest(1, 100, sys), 0, []View{{Index: 4}, {Index: 7, Routed: 1}})
	if got := sgRoute(s, sgRequest(2, 100, sys), 0, []View{{Index: 7, Routed: 3}, {Index: 9}}); got != 7 {
		t.Errorf("routed to %d, want the first worker, 7", got)
	}
	if m, inst := s.legs[0].tree.match(appendPrompt(nil, sgRequest(3, 100, sys))); m != 0 || inst == 4 {
		t.Errorf("the gone worker still holds the prompt: match %d at %d", m, inst)
	}
}

// TestSGLangPDPicksBothAtArrival: disaggregated, both workers are chosen
// at arrival, the prefill worker by prefill_policy and the decode worker
// by decode_policy, each leg with its own state.
func TestSGLangPDPicksBothAtArrival(t *testing.T) {
	cfg := DefaultSGLangConfig()
	cfg.DecodePolicy = SGLangRoundRobin
	s := NewSGLang(cfg, seeded())
	pre := []View{{Index: 0}, {Index: 1}}
	dec := []View{{Index: 2}, {Index: 3}, {Index: 4}}
	sys := kv.Segment{ID: 1, Tokens: 100}
	var got []string
	for i := range 4 {
		// request 0 goes to 0 (the least loaded, first), the rest to its match
		d := s.Route(sgRequest(int64(i), 120, sys), &Cluster{Prefill: pre, Decode: dec})
		got = append(got, fmt.Sprint(d.Prefill, d.Decode))
	}
	if want := "[0 2 0 3 0 4 0 2]"; fmt.Sprint(got) != want {
		t.Errorf("decisions %v, want %s", got, want)
	}

	cfg = DefaultSGLangConfig() // cache-aware decoders: their own tree
	s = NewSGLang(cfg, seeded())
	d1 := s.Route(sgRequest(1, 120, sys), &Cluster{Prefill: pre, Decode: []View{{Index: 2, Routed: 1}, {Index: 3}}})
	d2 := s.Route(sgRequest(2, 120, sys), &Cluster{Prefill: pre, Decode: []View{{Index: 2}, {Index: 3, Routed: 1}}})
	if d1.Decode != 3 || d2.Decode != 3 || d1.Decode == DecodeLater {
		t.Errorf("cache-aware decoders %d then %d, want 3 (least loaded) then 3 (its match)", d1.Decode, d2.Decode)
	}
}

// TestSGLangPowerOfTwo: two distinct workers drawn, the first unless the
// second has fewer requests in flight.
func TestSGLangPowerOfTwo(t *testing.T) {
	cfg := DefaultSGLangConfig()
	cfg.Policy = SGLangPowerOfTwo
	s := NewSGLang(cfg, seeded())
	vs := sgViews(5, 0, 5)
	counts := frequencies(3000, func() Decision { return s.Route(sgRequest(1, 10), &Cluster{Prefill: vs}) })
	// Worker 1 wins every pair it is in (2/3 of pairs); 0 and 2 tie, the
	// first drawn winning: 1/6 each.
	if c := counts[1]; c < 1900 || c > 2100 {
		t.Errorf("least loaded chosen %d of 3000, want about 2000 (%v)", c, counts)
	}
	if c := counts[0]; c < 400 || c > 600 {
		t.Errorf("worker 0 chosen %d of 3000, want about 500 (%v)", c, counts)
	}
}

// TestSGLangDeterministic: one seed, one sequence of decisions, under
// every policy.
func TestSGLangDeterministic(t *testing.T) {
	run := func(policy string) string {
		cfg := DefaultSGLangConfig()
		cfg.Policy, cfg.BalanceAbsThreshold, cfg.EvictionInterval, cfg.MaxTreeSize = policy, 2, 1e6, 4000
		s := NewSGLang(cfg, rand.New(rand.NewPCG(7, 8)))
		draw := rand.New(rand.NewPCG(3, 4))
		pre, dec := sgViews(0, 0, 0, 0), []View{{Index: 4}, {Index: 5}}
		out := ""
		for i := range 400 {
			pre[draw.IntN(4)].Routed = draw.IntN(6)
			r := sgRequest(int64(i), 50+draw.IntN(400), kv.Segment{ID: uint64(draw.IntN(5)), Tokens: draw.IntN(300)})
			d := s.Route(r, &Cluster{Prefill: pre, Decode: dec, NowNs: int64(i) * 1e5})
			out += fmt.Sprint(d.Prefill, d.Decode, " ")
		}
		return out
	}
	for _, p := range SGLangPolicies() {
		if a, b := run(p), run(p); a != b {
			t.Errorf("%s: two runs of one seed differ", p)
		}
	}
}
