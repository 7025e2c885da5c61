package router

import (
	"math/rand/v2"

	"handoff/models/strictyaml"
)

// TopologyAware is Dynamo's cost plus the network. Disaggregated, it
// prices every (prefiller p, decoder d) pair and takes the cheapest:
//
//	cost(p, d) = prefill_cost_p + decode_cost_d + BlocksPerMs · transfer_ms(p, d)
//	transfer_ms(p, d) = max(TransferNs(p, d, KVBytes(d, ISL − B·(overlap_d + tiers_d))),
//	                        OnboardNs(d, tiers_d)) / 1e6
//
// prefill_cost_p is Dynamo's full cost of p and decode_cost_d its
// load-only decode cost; the transfer moves the prompt tokens the decoder
// does not cache, over the path and at the rate the network predicts now,
// while the decoder reads what its lower tiers hold (tiers_d: its host,
// disk and store runs past its device overlap) over their links: a prompt
// in the shared store is priced as an onboard from the store against a
// transfer from the prefiller.
// BlocksPerMs converts a millisecond of transfer into blocks of cost: a
// prefiller computing T tokens/ms at block size B is worth T/B blocks per
// ms of delay. Colocated, there is no transfer and it is exactly Dynamo.
// Temperature, the queue threshold, the busy thresholds and the prefix
// source (KV events or the router's own index) behave as in Dynamo, over
// pairs; session affinity binds colocated workers only (a pair is priced
// whole). Unlike Dynamo,
// it chooses the decoder at arrival: pricing the transfer needs it.
type TopologyAware struct {
	d           *Dynamo
	blocksPerMs float64
	pre, dec    []float64 // per-leg costs
	uncached    []int     // per decoder: prompt tokens it does not cache
	onboardNs   []int64   // per decoder: predicted read of what its lower tiers hold
	pairs       []float64 // cost of pair (i, j) at i·len(dec) + j
}

// TopologyAwareConfig is the router.topology_aware section of a scenario:
// the network term of the cost. The policy reads the dynamo section too
// (DynamoConfig), for the rest of the cost.
type TopologyAwareConfig struct {
	BlocksPerMs float64 `yaml:"blocks_per_ms"` // blocks of cost per ms of predicted KV transfer
}

// DefaultTopologyAwareConfig returns 1 block per ms: about an 8B model's
// prefill rate on one H100 (≈16 tokens/ms) at block size 16.
func DefaultTopologyAwareConfig() TopologyAwareConfig { return TopologyAwareConfig{BlocksPerMs: 1} }

// Check validates the section; errors name the field relative to it.
func (c *TopologyAwareConfig) Check() error {
	if !weightOK(c.BlocksPerMs) {
		return strictyaml.Fieldf("blocks_per_ms", "must be in [0, %g], got %g", MaxWeight, c.BlocksPerMs)
	}
	return nil
}

// NewTopologyAware returns the router. Panics if blocksPerMs < 0, if cfg
// asks for conditional disaggregation (the pair search replaces it), or
// on anything NewDynamo panics on.
func NewTopologyAware(cfg DynamoConfig, blocksPerMs float64, rng *rand.Rand) *TopologyAware {
	if !(blocksPerMs >= 0) || cfg.ConditionalDisagg {
		panic("router: TopologyAware needs blocks per ms ≥ 0 and no conditional disaggregation")
	}
	return &TopologyAware{d: NewDynamo(cfg, rng), blocksPerMs: blocksPerMs}
}

// UsesHashes implements HashUser: it reads the prompt's block hashes.
func (*TopologyAware) UsesHashes() bool { return true }

// CountsOutputBlocks implements OutputBlockCounter, as Dynamo's.
func (t *TopologyAware) CountsOutputBlocks() bool { return t.d.CountsOutputBlocks() }

// ReadsInstanceState implements InstanceStateReader, as Dynamo's.
func (t *TopologyAware) ReadsInstanceState() bool { return t.d.ReadsInstanceState() }

// Reindex implements Indexer: colocated, Dynamo's indexes. Disaggregated,
// none: the network term ties each prefiller's cost to each decoder's, so
// the pair search prices every pair, O(P·D) a decision, as no order of
// prefillers or of decoders alone can stand in for it.
func (t *TopologyAware) Reindex(c *Cluster) {
	if len(c.Decode) > 0 {
		t.d.ix = nil
		return
	}
	t.d.Reindex(c)
}

// Changed implements Indexer.
func (t *TopologyAware) Changed(c *Cluster, decode bool, k int) {
	if t.d.ix != nil {
		t.d.Changed(c, decode, k)
	}
}

// Route implements Router.
func (t *TopologyAware) Route(r *Request, c *Cluster) Decision {
	if len(c.Decode) == 0 {
		return t.d.Route(r, c)
	}
	if t.d.cfg.busyConfigured() { // Dynamo's busy thresholds, over pairs of free workers
		free, ok := t.d.freeLegs(c)
		if !ok {
			return rejected(ReasonBusy)
		}
		c = free
	}
	if t.d.holds(c) {
		return held()
	}
	t.pairCosts(r, c)
	k := t.d.ch.minCost(t.pairs, t.d.cfg.Temperature)
	p, dec := c.Prefill[k/len(c.Decode)].Index, c.Decode[k%len(c.Decode)].Index
	t.d.record(r, c, p)
	t.d.record(r, c, dec)
	return Decision{Prefill: p, Decode: dec, PrefillCached: cachedTokens(r, c, t.d.overlaps[k/len(c.Decode)])}
}

// pairCosts fills t.pairs. Cost O(P·D) transfer predictions.
func (t *TopologyAware) pairCosts(r *Request, c *Cluster) {
	t.pre = t.d.prefillCosts(t.pre[:0], r, c, c.Prefill)
	t.dec = t.d.decodeCosts(t.dec[:0], r, c.Decode, c.BlockSize)
	t.uncached, t.onboardNs = t.uncached[:0], t.onboardNs[:0]
	for j := range c.Decode {
		dec := c.Decode[j].Index
		held := t.d.overlap(r, c, dec)
		var onboard int64
		if c.TierOverlap != nil && len(r.Hashes) > 0 && t.d.index == nil {
			tiers := c.TierOverlap(dec, r.Hashes, held)
			held += tiers.Sum()
			if tiers.Sum() > 0 {
				onboard = c.OnboardNs(dec, tiers)
			}
		}
		t.uncached = append(t.uncached, max(0, r.PromptTokens-held*c.BlockSize))
		t.onboardNs = append(t.onboardNs, onboard)
	}
	t.pairs = t.pairs[:0]
	for i := range c.Prefill {
		for j := range c.Decode {
			t.pairs = append(t.pairs, t.pre[i]+t.dec[j]+t.networkBlocks(c, c.Prefill[i].Index, c.Decode[j].Index,
				t.uncached[j], t.onboardNs[j]))
		}
	}
}

// networkBlocks is the transfer term of a pair, in blocks: the predicted
// time to move uncached tokens of KV from instance p to dec, or to read
// what dec's tiers hold (onboardNs), whichever is longer.
func (t *TopologyAware) networkBlocks(c *Cluster, p, dec, uncached int, onboardNs int64) float64 {
	if t.blocksPerMs == 0 {
		return 0
	}
	ns := max(c.TransferNs(p, dec, c.KVBytes(dec, uncached)), onboardNs)
	return t.blocksPerMs * float64(ns) / 1e6
}

// QueueKey implements Queuer, as Dynamo's queue does.
func (t *TopologyAware) QueueKey(r *Request) int64 { return t.d.QueueKey(r) }

// Queues implements Queuer, as Dynamo's queue does.
func (t *TopologyAware) Queues() bool { return t.d.Queues() }
