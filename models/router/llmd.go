package router

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"handoff/models/strictyaml"
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
		ScorerPrecisePrefix, ScorerRunningRequests, ScorerNoHitLRU, ScorerTokenLoad}
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

// WeightedScorer is one scorer and its weight (≥ 0) in the total.
type WeightedScorer struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight"` // a scenario leaving it out weighs 1
}

// LLMDConfig is the llm-d scheduler's plugins: the router.llmd section of
// a scenario (YAML-tagged), its defaults (DefaultLLMDConfig) and checks
// (Check), and NewLLMD's configuration.
type LLMDConfig struct {
	Scorers []WeightedScorer `yaml:"scorers"`
	Picker  string           `yaml:"picker"` // max-score | weighted-random
	// NonCachedTokens: in a disaggregated cluster, prefill on a prefiller
	// iff the chosen decoder lacks at least this many prompt tokens;
	// 0 never disaggregates (every request prefills on its decoder).
	NonCachedTokens int `yaml:"non_cached_tokens"`
	// LRUCapacityPerServer bounds the prefix index, in blocks per
	// instance; 0 sizes each instance's LRU from its KV block count, as
	// llm-d's auto-tuned scorer does from the pod's cache_config metrics.
	LRUCapacityPerServer int `yaml:"lru_capacity_per_server"`
	// MediumWeights weigh a block the precise prefix scorer finds by the
	// medium holding it; nil (or a nil weight) is llm-d's
	// (DefaultMediumWeights).
	MediumWeights *MediumWeights `yaml:"medium_weights,omitempty"`
	// FlowControl queues requests in the gateway by priority band while
	// the pool is saturated (flowcontrol.go); nil or not enabled: none.
	FlowControl *FlowControl `yaml:"flow_control,omitempty"`
	// PrefixAffinity filters the candidates by their prefix share before
	// the scorers (llmdaffinity.go); nil: no filter.
	PrefixAffinity *PrefixAffinity `yaml:"prefix_affinity_filter,omitempty"`
	// NoHitLRUSize is how many instances the no-hit-LRU scorer's LRU
	// keeps (its lruSize parameter).
	NoHitLRUSize int `yaml:"no_hit_lru_size"`
	// TokenLoadThreshold is the in-flight tokens at which the token-load
	// scorer gives 0 (its queueThresholdTokens parameter).
	TokenLoadThreshold int `yaml:"token_load_threshold"`
}

// MediumWeights are the precise prefix scorer's per-medium block weights,
// each in [0, 1]: gpu is HBM, cpu the host tier. llm-d's default table
// weighs gpu 1.0 and cpu 0.8 (llm-d-kv-cache, pkg/kvcache/backend.go,
// DefaultKVCacheBackendConfig); a medium missing from it counts 1.0
// (LongestPrefixScorer.getMaxWeight), so disk and store blocks weigh 1.0
// unless set.
type MediumWeights struct {
	GPU   *float64 `yaml:"gpu"`
	CPU   *float64 `yaml:"cpu"`
	Disk  *float64 `yaml:"disk"`
	Store *float64 `yaml:"store"`
}

// mediumWeights are the resolved weights.
type mediumWeights struct{ gpu, cpu, disk, store float64 }

// DefaultMediumWeights returns llm-d's: gpu 1, cpu 0.8, others 1.
func DefaultMediumWeights() MediumWeights {
	return MediumWeights{GPU: ptr(1.0), CPU: ptr(0.8), Disk: ptr(1.0), Store: ptr(1.0)}
}

func ptr[T any](v T) *T { return &v }

// resolved returns the weights w sets over llm-d's.
func (w *MediumWeights) resolved() mediumWeights {
	def := DefaultMediumWeights()
	var out [4]float64
	for k, v := range w.fields() {
		if v == nil {
			v = def.fields()[k]
		}
		out[k] = *v
	}
	return mediumWeights{gpu: out[0], cpu: out[1], disk: out[2], store: out[3]}
}

// fields returns the weights in the order gpu, cpu, disk, store; a nil w
// has none set.
func (w *MediumWeights) fields() [4]*float64 {
	if w == nil {
		return [4]*float64{}
	}
	return [4]*float64{w.GPU, w.CPU, w.Disk, w.Store}
}

// DefaultLLMDConfig returns llm-d's defaults: queue 2,
// kv-cache-utilization 2, prefix-cache 3, max-score, no disaggregation,
// each instance's LRU as large as its KV pool, llm-d's medium weights,
// a no-hit LRU of 1,024 instances, a token-load threshold of 4,194,304.
func DefaultLLMDConfig() LLMDConfig {
	return LLMDConfig{Scorers: []WeightedScorer{{ScorerQueue, 2}, {ScorerKVUtilization, 2}, {ScorerPrefixCache, 3}},
		Picker: PickerMaxScore, NoHitLRUSize: DefaultNoHitLRUSize, TokenLoadThreshold: DefaultTokenLoadThreshold}
}

// maxLRUCapacity bounds lru_capacity_per_server and no_hit_lru_size;
// maxTokenLoadThreshold bounds token_load_threshold.
const (
	maxLRUCapacity        = 1 << 24
	maxTokenLoadThreshold = 1 << 40
)

// Check validates the section; errors name the field relative to it.
func (c *LLMDConfig) Check() error {
	if len(c.Scorers) == 0 {
		return strictyaml.Fieldf("scorers", "at least one scorer is required (known: %s)", strings.Join(ScorerNames(), ", "))
	}
	seen := map[string]bool{}
	for i, s := range c.Scorers {
		f := fmt.Sprintf("scorers[%d]", i)
		switch {
		case !slices.Contains(ScorerNames(), s.Name):
			return strictyaml.Fieldf(f+".name", "unknown scorer %q (known: %s)", s.Name, strings.Join(ScorerNames(), ", "))
		case seen[s.Name]:
			return strictyaml.Fieldf(f+".name", "scorer %q is listed twice", s.Name)
		case !weightOK(s.Weight):
			return strictyaml.Fieldf(f+".weight", "must be in [0, %g], got %g", MaxWeight, s.Weight)
		}
		seen[s.Name] = true
	}
	switch {
	case !slices.Contains(PickerNames(), c.Picker):
		return strictyaml.Fieldf("picker", "unknown picker %q (known: %s)", c.Picker, strings.Join(PickerNames(), ", "))
	case c.NonCachedTokens < 0:
		return strictyaml.Fieldf("non_cached_tokens", "must not be negative (0 = never disaggregate), got %d", c.NonCachedTokens)
	case c.LRUCapacityPerServer < 0 || c.LRUCapacityPerServer > maxLRUCapacity:
		return strictyaml.Fieldf("lru_capacity_per_server", "must be in [0, %d] blocks (0: each instance's KV pool), got %d",
			maxLRUCapacity, c.LRUCapacityPerServer)
	case c.NoHitLRUSize < 1 || c.NoHitLRUSize > maxLRUCapacity:
		return strictyaml.Fieldf("no_hit_lru_size", "must be in [1, %d] instances, got %d", maxLRUCapacity, c.NoHitLRUSize)
	case c.TokenLoadThreshold < 1 || c.TokenLoadThreshold > maxTokenLoadThreshold:
		return strictyaml.Fieldf("token_load_threshold", "must be in [1, %d] tokens, got %d", maxTokenLoadThreshold, c.TokenLoadThreshold)
	}
	for k, v := range c.MediumWeights.fields() {
		if v != nil && !(*v >= 0 && *v <= 1) {
			return strictyaml.Fieldf("medium_weights."+[...]string{"gpu", "cpu", "disk", "store"}[k], "must be in [0, 1], got %g", *v)
		}
	}
	if err := nested("prefix_affinity_filter", c.PrefixAffinity); err != nil {
		return err
	}
	return nested("flow_control", c.FlowControl)
}

// nested checks a subsection (nil: absent), its errors' fields placed
// under key.
func nested[T any, P interface {
	*T
	Check() error
}](key string, sub P) error {
	if sub == nil {
		return nil
	}
	var fe *strictyaml.FieldError
	err := sub.Check()
	if errors.As(err, &fe) {
		fe.Field = key + "." + fe.Field
	}
	return err
}

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
	totals, score []float64
	kept          []int      // scratch: the positions the affinity filter keeps
	sticky        []View     // scratch: their views
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
	return &LLMD{cfg: cfg, weights: cfg.MediumWeights.resolved(), ch: chooser{rng: rng}, index: NewLRUIndex()}
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
	l.noHitUsed(d)
	return d
}

// route is Route once flow control lets the request through.
func (l *LLMD) route(r *Request, c *Cluster) Decision {
	if len(c.Decode) == 0 {
		k := l.pick(r, c, false)
		l.record(r, &c.Prefill[k])
		return Decision{Prefill: c.Prefill[k].Index, Decode: -1}
	}
	k := l.pick(r, c, true)
	dec := c.Decode[k].Index
	remote := l.remote(r, c.BlockSize, dec)
	l.record(r, &c.Decode[k])
	if !remote {
		return Decision{Prefill: dec, Decode: -1}
	}
	kp := l.pick(r, c, false)
	l.record(r, &c.Prefill[kp])
	return Decision{Prefill: c.Prefill[kp].Index, Decode: dec}
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

// pick returns the position in vs, c's decode leg (decode) or prefill
// leg, of the chosen candidate.
func (l *LLMD) pick(r *Request, c *Cluster, decode bool) int {
	if k, ok := l.pickIndexed(r, c, decode); ok {
		return k
	}
	vs, kept := l.affinityFilter(r, c.leg(decode))
	l.totals = l.Totals(l.totals[:0], r, c, vs)
	k := l.ch.maxScore
	if l.cfg.Picker == PickerWeightedRandom {
		k = l.ch.weighted
	}
	if kept == nil {
		return k(l.totals)
	}
	return kept[k(l.totals)]
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
