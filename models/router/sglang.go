package router

import "math/rand/v2"

// SGLang is SGLang's router, sgl-model-gateway (formerly sgl-router), in
// its cache-aware policy by default (policies/cache_aware.rs,
// CacheAwarePolicy::select_worker). For each request, over a leg's
// workers, with load a worker's requests in flight as the router counts
// them (Worker::load, raised and lowered by its WorkerLoadGuard; the PD
// router holds the guards of both workers until the response is done,
// so a prefiller counts its requests until they finish decoding:
// View.Routed):
//
//   - imbalanced — max − min > balance_abs_threshold and max >
//     balance_rel_threshold × min — the least loaded worker
//     (select_worker_min_load), the prompt still recorded in its tree;
//   - else the prompt's longest match in the leg's approximate tree
//     (tree.rs, Tree::prefix_match): matched / prompt tokens above
//     cache_threshold sends it to the worker the match reports (the first
//     holder of the node it ends in), else to
//     the least loaded worker (cache_miss least_load; sgl-router before
//     the gateway: the worker with the smallest tree, smallest_tree);
//     the prompt is recorded under the chosen worker (Tree::insert).
//
// Every eviction_interval the trees drop each worker's least recently
// used leaves until it holds at most max_tree_size characters
// (Tree::evict_tenant_by_size, run by the policy's eviction thread). A
// matched worker that is no longer in the leg is removed from the tree
// and the request goes to the leg's first worker, as upstream.
//
// Disaggregated, the PD router (routers/http/pd_router, select_pd_pair)
// picks both workers at arrival, the prefill worker by prefill_policy and
// the decode worker by decode_policy (both default to policy), and sends
// the request to both at once: the decoder waits on the prefiller's
// bootstrap. Each leg keeps its own tree, as two policy instances do.
//
// What it leaves out: its trees match tokens, not characters (upstream
// tokenizes nothing, matching the request's text), so a match here ends
// at a token boundary where upstream's can run a few characters into a
// differing token; a streamed request's guards, taken upstream when the
// decoder's stream begins, count here from routing, as a non-streamed
// one's; power_of_two's token loads polled from the workers (its
// LoadMonitor) are left for the request counts it falls back to; health
// checks, retries, circuit breakers and per-model trees do not arise.
type SGLang struct {
	cfg         SGLangConfig
	rng         *rand.Rand
	legs        [2]sgLeg // prefill (or colocated), decode
	nextEvictNs int64
	maxTokens   int     // max_tree_size in tokens
	text        []sgRun // scratch: the prompt
	work        []sgRun // scratch: a copy the tree consumes
}

// sgLeg is one leg's policy state.
type sgLeg struct {
	tree *sgTree // cache_aware
	next int     // round_robin's counter
}

// NewSGLang returns the router; random and power_of_two draw from rng.
// Panics if cfg fails Check or rng is nil.
func NewSGLang(cfg SGLangConfig, rng *rand.Rand) *SGLang {
	if err := cfg.Check(); err != nil || rng == nil {
		panic("router: SGLang needs a valid configuration and a random stream")
	}
	s := &SGLang{cfg: cfg, rng: rng, nextEvictNs: int64(cfg.EvictionInterval), maxTokens: cfg.MaxTreeSize / charsPerToken}
	for k := range s.legs {
		s.legs[k] = sgLeg{tree: newSGTree()}
	}
	return s
}

// ReadsInstanceState implements InstanceStateReader: it reads only the
// router's bookkeeping.
func (*SGLang) ReadsInstanceState() bool { return false }

// Route implements Router: both legs at arrival.
func (s *SGLang) Route(r *Request, c *Cluster) Decision {
	s.evictDue(c.NowNs)
	s.text = appendPrompt(s.text[:0], r)
	if len(c.Decode) == 0 {
		return Decision{Prefill: s.pick(0, s.cfg.Policy, c.Prefill), Decode: -1}
	}
	return Decision{Prefill: s.pick(0, s.cfg.legPolicy(false), c.Prefill),
		Decode: s.pick(1, s.cfg.legPolicy(true), c.Decode)}
}

// evictDue runs the trees' eviction when its interval has passed.
func (s *SGLang) evictDue(nowNs int64) {
	every := int64(s.cfg.EvictionInterval)
	if every <= 0 || nowNs < s.nextEvictNs {
		return
	}
	for k := range s.legs {
		s.legs[k].tree.evict(s.maxTokens)
	}
	s.nextEvictNs += (nowNs-s.nextEvictNs)/every*every + every
}

// pick returns the instance index leg leg's policy chooses among vs.
func (s *SGLang) pick(leg int, policy string, vs []View) int {
	l := &s.legs[leg]
	switch policy {
	case SGLangRoundRobin:
		l.next++
		return vs[(l.next-1)%len(vs)].Index
	case SGLangRandom:
		return vs[s.rng.IntN(len(vs))].Index
	case SGLangPowerOfTwo:
		return s.powerOfTwo(vs)
	}
	return s.cacheAware(l.tree, vs)
}

// powerOfTwo is power_of_two.rs select_worker: two distinct workers
// drawn at random, the first unless the second has fewer requests in
// flight.
func (s *SGLang) powerOfTwo(vs []View) int {
	if len(vs) == 1 {
		return vs[0].Index
	}
	i := s.rng.IntN(len(vs))
	j := (i + 1 + s.rng.IntN(len(vs)-1)) % len(vs)
	if vs[i].Routed <= vs[j].Routed {
		return vs[i].Index
	}
	return vs[j].Index
}

// cacheAware is cache_aware.rs select_worker over one leg's tree.
func (s *SGLang) cacheAware(t *sgTree, vs []View) int {
	for k := range vs {
		t.addTenant(vs[k].Index) // a worker's registration (init_workers, add_worker)
	}
	lo, hi := loadRange(vs)
	if hi-lo > s.cfg.BalanceAbsThreshold && float32(hi) > float32(lo)*float32(s.cfg.BalanceRelThreshold) {
		inst := vs[leastRouted(vs)].Index
		t.insert(s.scratch(), inst)
		return inst
	}
	matched, inst := t.match(s.scratch())
	rate := float32(0)
	if n := textLen(s.text); n > 0 {
		rate = float32(matched) / float32(n)
	}
	if !(rate > float32(s.cfg.CacheThreshold)) {
		inst = s.miss(t, vs)
	}
	if position(vs, inst) < 0 {
		t.removeTenant(inst)
		return vs[0].Index
	}
	t.insert(s.scratch(), inst)
	return inst
}

// miss is the worker a prompt below the threshold goes to.
func (s *SGLang) miss(t *sgTree, vs []View) int {
	if s.cfg.CacheMiss == SGLangMissLeastLoad {
		return vs[leastRouted(vs)].Index
	}
	best := 0
	for k := range vs {
		if t.size[vs[k].Index] < t.size[vs[best].Index] {
			best = k
		}
	}
	return vs[best].Index
}

// scratch returns a copy of the prompt for the tree to consume.
func (s *SGLang) scratch() []sgRun {
	s.work = append(s.work[:0], s.text...)
	return s.work
}

// loadRange returns the least and most requests in flight over vs.
func loadRange(vs []View) (lo, hi int) {
	lo, hi = vs[0].Routed, vs[0].Routed
	for k := range vs {
		lo, hi = min(lo, vs[k].Routed), max(hi, vs[k].Routed)
	}
	return lo, hi
}

// leastRouted returns the position of the first view with the fewest
// requests in flight (min_by_key over the healthy workers).
func leastRouted(vs []View) int {
	best := 0
	for k := range vs {
		if vs[k].Routed < vs[best].Routed {
			best = k
		}
	}
	return best
}

// position returns the position in vs of instance inst, or −1.
func position(vs []View, inst int) int {
	for k := range vs {
		if vs[k].Index == inst {
			return k
		}
	}
	return -1
}
