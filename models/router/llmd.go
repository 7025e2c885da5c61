package router

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// The llm-d scorer names.
const (
	ScorerPrefixCache   = "prefix-cache"         // matched blocks / request blocks (at most 256), from the router's LRU index
	ScorerKVUtilization = "kv-cache-utilization" // 1 − KV usage at the last refresh
	ScorerQueue         = "queue"                // min-max over waiting sequences, fewer is better
	ScorerLoadAware     = "load-aware"           // 0.5 empty, else 0.5·(1 − min(waiting, 128)/128)
	ScorerActiveRequest = "active-request"       // (max − n)/max over outstanding requests n; idle instances 1
	ScorerPrecisePrefix = "precise-prefix-cache" // weighted matched blocks / request blocks, from the instances' KV events, lower tiers included
)

// The llm-d picker names.
const (
	PickerMaxScore       = "max-score"       // highest total score, ties at random
	PickerWeightedRandom = "weighted-random" // probability proportional to total score
)

// ScorerNames returns the known scorer names, for validation.
func ScorerNames() []string {
	return []string{ScorerPrefixCache, ScorerKVUtilization, ScorerQueue, ScorerLoadAware, ScorerActiveRequest,
		ScorerPrecisePrefix, ScorerRunningRequests, ScorerNoHitLRU, ScorerTokenLoad, ScorerSessionAffinity,
		ScorerContextLength}
}

// PickerNames returns the known picker names, for validation.
func PickerNames() []string { return []string{PickerMaxScore, PickerWeightedRandom} }

// loadAwareQueueMax is the waiting count at which load-aware scores 0.
const loadAwareQueueMax = 128

// maxPrefixBlocks is how many of a prompt's leading blocks llm-d's
// approximate prefix scorer hashes, records and matches
// (defaultMaxPrefixBlocks in llm-d-inference-scheduler's approximateprefix
// data producer).
const maxPrefixBlocks = 256

// LLMD is llm-d's inference scheduler: the role split is the filter, then
// each candidate's total is the weighted sum of its scores (each in
// [0, 1]) and the picker chooses. Disaggregated, the decoder is chosen
// first; the prefix decider then sends the prefill to a prefiller (chosen
// by the same scorers) only if the decoder's non-cached tokens reach
// NonCachedTokens.
//
// Reindexed (Indexer), its max-score picker keeps each leg's candidates
// ordered by their total without a prefix, between refreshes of the
// instances' state (llmdindex.go).
type LLMD struct {
	cfg           LLMDConfig
	weights       mediumWeights
	ch            chooser
	index         *LRUIndex
	noHit         noHitLRU
	sessions      sessionPods // the session-affinity scorer's memory: each session's last pod
	totals, score []float64
	kept          []int      // scratch: the positions the affinity filter keeps
	sticky        []View     // scratch: their views
	fitKept       []int      // scratch: the positions the context-length filter keeps
	fitting       []View     // scratch: their views
	ix            *llmdIndex // nil until reindexed
}

// NewLLMD returns the scheduler; ties and weighted-random draws come from
// rng. A no-hit LRU size of 0 is DefaultNoHitLRUSize, a token-load
// threshold ≤ 0 DefaultTokenLoadThreshold (as upstream's factory). Panics on a configuration the scenario loader would reject.
func NewLLMD(cfg LLMDConfig, rng *rand.Rand) *LLMD {
	if rng == nil || cfg.NonCachedTokens < 0 || cfg.LRUCapacityPerServer < 0 || cfg.NoHitLRUSize < 0 {
		panic("router: LLMD needs a random stream, non-cached tokens ≥ 0, an LRU capacity ≥ 0 and a no-hit LRU size ≥ 0")
	}
	for _, s := range cfg.Scorers {
		if !slices.Contains(ScorerNames(), s.Name) || !(s.Weight >= 0) {
			panic(fmt.Sprintf("router: LLMD scorer %q with weight %g", s.Name, s.Weight))
		}
	}
	if !slices.Contains(PickerNames(), cfg.Picker) {
		panic(fmt.Sprintf("router: LLMD picker %q", cfg.Picker))
	}
	if f := cfg.FlowControl; f != nil && f.Enabled && f.Check() != nil {
		panic(fmt.Sprintf("router: LLMD flow control %+v", *f))
	}
	if f := cfg.PrefixAffinity; f != nil && f.Check() != nil {
		panic(fmt.Sprintf("router: LLMD prefix-affinity filter %+v", *f))
	}
	if cfg.NoHitLRUSize == 0 {
		cfg.NoHitLRUSize = DefaultNoHitLRUSize
	}
	if cfg.TokenLoadThreshold <= 0 {
		cfg.TokenLoadThreshold = DefaultTokenLoadThreshold
	}
	return &LLMD{cfg: cfg, weights: cfg.MediumWeights.resolved(), ch: chooser{rng: rng}, index: NewLRUIndex(),
		sessions: sessionPods{}}
}

// UsesHashes implements HashUser: it reads the prompt's block hashes.
func (*LLMD) UsesHashes() bool { return true }

// Route implements Router: held while flow control finds the pool
// saturated.
func (l *LLMD) Route(r *Request, c *Cluster) Decision {
	if l.cfg.FlowControl.saturated(c) {
		return held()
	}
	d := l.route(r, c)
	if d.IsRejected() {
		return d
	}
	l.noHitUsed(d)
	l.sessions.served(r, target(d))
	return d
}

// route is Route once flow control lets the request through; rejected
// when a filter leaves a leg no candidate.
func (l *LLMD) route(r *Request, c *Cluster) Decision {
	noFit := rejected(ReasonNoFit)
	if len(c.Decode) == 0 {
		k := l.pick(r, c, false)
		if k < 0 {
			return noFit
		}
		l.record(r, &c.Prefill[k])
		return Decision{Prefill: c.Prefill[k].Index, Decode: -1}
	}
	k := l.pick(r, c, true)
	if k < 0 {
		return noFit
	}
	dec := c.Decode[k].Index
	remote := l.remote(r, c.BlockSize, dec)
	l.record(r, &c.Decode[k])
	if !remote {
		return Decision{Prefill: dec, Decode: -1}
	}
	kp := l.pick(r, c, false)
	if kp < 0 {
		return noFit
	}
	l.record(r, &c.Prefill[kp])
	return Decision{Prefill: c.Prefill[kp].Index, Decode: dec}
}

// target is the instance a decision sends the client's response from:
// the decoder, or the instance that prefills and decodes.
func target(d Decision) int {
	if d.Decode >= 0 {
		return d.Decode
	}
	return d.Prefill
}

// noHitUsed is the no-hit-LRU scorer's PreRequest: a cold request's
// decoder (the primary profile's pick), then its prefiller, become the
// most recently used.
func (l *LLMD) noHitUsed(d Decision) {
	if !l.noHit.cold || !slices.ContainsFunc(l.cfg.Scorers, func(s WeightedScorer) bool { return s.Name == ScorerNoHitLRU }) {
		return
	}
	if d.Decode >= 0 {
		l.noHit.used(d.Decode, l.cfg.NoHitLRUSize)
	}
	l.noHit.used(d.Prefill, l.cfg.NoHitLRUSize)
	l.noHit.cold = false
}

// record teaches the index that instance v will hold the request's
// leading blocks.
func (l *LLMD) record(r *Request, v *View) {
	capacity := l.cfg.LRUCapacityPerServer
	if capacity == 0 {
		capacity = max(1, v.TotalBlocks)
	}
	l.index.Record(v.Index, prefixBlocks(r), capacity)
}

// prefixBlocks is the part of the request's block hashes llm-d's scorer
// considers.
func prefixBlocks(r *Request) []uint64 { return r.Hashes[:min(len(r.Hashes), maxPrefixBlocks)] }

// remote is the prefix decider: does decoder dec lack at least
// NonCachedTokens of the prompt?
func (l *LLMD) remote(r *Request, blockSize, dec int) bool {
	if l.cfg.NonCachedTokens == 0 {
		return false
	}
	nonCached := max(0, r.PromptTokens-l.index.Matched(dec, prefixBlocks(r))*blockSize)
	return nonCached >= l.cfg.NonCachedTokens
}

// pick returns the position in c's decode leg (decode) or prefill leg of
// the chosen candidate, or −1 when the context-length filter keeps none.
func (l *LLMD) pick(r *Request, c *Cluster, decode bool) int {
	if k, ok := l.pickIndexed(r, c, decode); ok {
		return k
	}
	vs, fit := l.contextFilter(r, c, c.leg(decode))
	if len(vs) == 0 {
		return -1
	}
	vs, kept := l.affinityFilter(r, vs)
	l.totals = l.Totals(l.totals[:0], r, c, vs)
	k := l.ch.maxScore
	if l.cfg.Picker == PickerWeightedRandom {
		k = l.ch.weighted
	}
	pos := k(l.totals)
	if kept != nil {
		pos = kept[pos]
	}
	if fit != nil {
		pos = fit[pos]
	}
	return pos
}

// Totals appends to dst each candidate's weighted score total and returns
// it; c may be nil unless a scorer reads the cluster (the precise prefix
// scorer). Cost O(scorers · candidates) plus the prefix lookups.
func (l *LLMD) Totals(dst []float64, r *Request, c *Cluster, vs []View) []float64 {
	for range vs {
		dst = append(dst, 0)
	}
	for _, s := range l.cfg.Scorers {
		l.score = l.Score(l.score[:0], s.Name, r, c, vs)
		for i, x := range l.score {
			dst[i] += s.Weight * x
		}
	}
	return dst
}

// Score appends to dst the named scorer's value for each candidate,
// clamped to [0, 1]. Panics on an unknown name.
func (l *LLMD) Score(dst []float64, name string, r *Request, c *Cluster, vs []View) []float64 {
	start := len(dst)
	dst, ok := l.scoreInto(dst, name, r, c, vs)
	if !ok {
		panic(fmt.Sprintf("router: unknown llm-d scorer %q", name))
	}
	for i := start; i < len(dst); i++ {
		dst[i] = clampScore(dst[i])
	}
	return dst
}

// clampScore clamps a scorer's raw value to [0, 1].
func clampScore(x float64) float64 { return min(1, max(0, x)) }

// scoreInto appends the named scorer's raw values; ok is false for an
// unknown name.
func (l *LLMD) scoreInto(dst []float64, name string, r *Request, c *Cluster, vs []View) (out []float64, ok bool) {
	switch name {
	case ScorerPrefixCache:
		return l.prefixScores(dst, r, vs), true
	case ScorerPrecisePrefix:
		return l.preciseScores(dst, r, c, vs), true
	case ScorerKVUtilization:
		return kvScores(dst, vs), true
	case ScorerQueue:
		return minMaxScores(dst, vs, func(v *View) int { return v.Waiting }), true
	case ScorerLoadAware:
		return loadAwareScores(dst, vs), true
	case ScorerActiveRequest:
		return activeRequestScores(dst, vs), true
	case ScorerRunningRequests:
		return runningScores(dst, vs), true
	case ScorerTokenLoad:
		return tokenLoadScores(dst, vs, l.cfg.TokenLoadThreshold), true
	case ScorerNoHitLRU:
		return l.noHit.scores(dst, vs, func(inst int) bool { return l.index.Matched(inst, prefixBlocks(r)) > 0 }), true
	case ScorerSessionAffinity:
		return l.sessions.scores(dst, r, vs), true
	case ScorerContextLength:
		return contextScores(dst, r, c, vs), true
	}
	return dst, false
}

// prefixScores: the share of the request's leading blocks (at most 256)
// the LRU index holds for each candidate (0 for a request without full
// blocks).
func (l *LLMD) prefixScores(dst []float64, r *Request, vs []View) []float64 {
	for i := range vs {
		dst = append(dst, l.prefixScore(r, vs[i].Index))
	}
	return dst
}

// prefixScore is the prefix-cache scorer's raw value of instance inst.
func (l *LLMD) prefixScore(r *Request, inst int) float64 {
	hashes := prefixBlocks(r)
	if len(hashes) == 0 {
		return 0
	}
	return float64(l.index.Matched(inst, hashes)) / float64(len(hashes))
}

// preciseScores: llm-d's precise prefix-cache scorer
// (llm-d-kv-cache's LongestPrefixScorer.Score, with the scheduler's
// precise-prefix-cache-scorer dividing by the request's blocks): the
// longest prefix each candidate holds, from the instances' KV events, each
// block weighted by the medium holding it — its device run at the gpu
// weight, then its lower tiers' runs (host at the cpu weight, disk, store)
// — over the request's full blocks.
func (l *LLMD) preciseScores(dst []float64, r *Request, c *Cluster, vs []View) []float64 {
	for i := range vs {
		dst = append(dst, l.preciseScore(r, c, vs[i].Index))
	}
	return dst
}

// preciseScore is the precise prefix scorer's raw value of instance inst.
func (l *LLMD) preciseScore(r *Request, c *Cluster, inst int) float64 {
	if len(r.Hashes) == 0 {
		return 0
	}
	w := l.weights
	dev := c.Overlap(inst, r.Hashes)
	s := w.gpu * float64(dev)
	if c.TierOverlap != nil {
		t := c.TierOverlap(inst, r.Hashes, dev)
		s += w.cpu*float64(t[0]) + w.disk*float64(t[1]) + w.store*float64(t[2])
	}
	return s / float64(len(r.Hashes))
}

// activeRequestScores: (max − n)/max of each candidate's outstanding
// requests n, max over the candidates, and 1 for an idle candidate
// (llm-d's active-request scorer with its default idle threshold 0).
func activeRequestScores(dst []float64, vs []View) []float64 {
	most := 0
	for i := range vs {
		most = max(most, vs[i].Outstanding)
	}
	for i := range vs {
		s := 1.0
		if n := vs[i].Outstanding; n > 0 {
			s = float64(most-n) / float64(most)
		}
		dst = append(dst, s)
	}
	return dst
}

// kvScores: 1 − KV usage.
func kvScores(dst []float64, vs []View) []float64 {
	for i := range vs {
		dst = append(dst, 1-vs[i].KVUsage())
	}
	return dst
}

// minMaxScores: (max − q)/(max − min) of a per-candidate count q, 1 for
// every candidate when all counts are equal.
func minMaxScores(dst []float64, vs []View, count func(*View) int) []float64 {
	lo, hi := count(&vs[0]), count(&vs[0])
	for i := range vs {
		lo, hi = min(lo, count(&vs[i])), max(hi, count(&vs[i]))
	}
	for i := range vs {
		s := 1.0
		if hi > lo {
			s = float64(hi-count(&vs[i])) / float64(hi-lo)
		}
		dst = append(dst, s)
	}
	return dst
}

// loadAwareScores: 0.5 with nothing waiting, else 0.5·(1 − min(q, 128)/128).
func loadAwareScores(dst []float64, vs []View) []float64 {
	for i := range vs {
		q := min(vs[i].Waiting, loadAwareQueueMax)
		dst = append(dst, 0.5*(1-float64(q)/loadAwareQueueMax))
	}
	return dst
}
