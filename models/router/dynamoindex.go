package router

import "slices"

// Dynamo's indexes (Indexer). A worker r's prefix does not count on —
// no device overlap, so no credit, and no active request sharing it, so
// all of r's blocks are new — costs
//
//	PrefillLoadScale·(active_prefill + ISL)/B + active_blocks + R + DecodeActiveRequestWeight·outstanding
//
// which is its own key, PrefillLoadScale·active_prefill/B + active_blocks
// + DecodeActiveRequestWeight·outstanding, plus what every such worker
// adds alike. So each leg keeps its workers ordered by that key, and a
// choice at temperature 0 prices in full only the workers the prefix may
// count on (those Cluster.Caching, or the router's own index, and
// Cluster.Sharing name) and, of the rest, the cheapest key's bucket —
// workers with the same loads cost the same — and the few buckets whose
// key the float arithmetic could not tell from it (minCostIndexed). A tie
// is drawn as the scan draws it. The decoder chosen after the prefill is
// by load alone: a second order, by active blocks + request weight ·
// outstanding.
//
// Where the full cost reads every worker the index cannot stand in:
// at temperature > 0 (a softmax over every worker's cost), with lower KV
// tiers known from KV events (any worker may hold a prompt's blocks in the
// shared store), or without Caching or Sharing to name the workers a
// prefix counts on. Dynamo then scans.

// dynamoIndex is a Dynamo's indexes: a leg each.
type dynamoIndex struct {
	legs  [2]dynamoLeg // prefill, decode
	insts []int        // scratch: instances the prefix may count on
	pick  indexedCosts // scratch: what a choice is among
	full  fullCosts
	load  loadCosts
}

// fullCosts prices a leg's workers without a prefix (pickIndexed).
type fullCosts struct {
	d         *Dynamo
	r         *Request
	c         *Cluster
	vs        []View
	minActive int
}

func (f *fullCosts) cost(k int) float64 { return f.d.fullCost(f.r, f.c, &f.vs[k], 0, f.minActive) }

// loadCosts prices decoders by load alone (pickDecodeIndexed).
type loadCosts struct {
	d         *Dynamo
	vs        []View
	reqBlocks int
}

func (l *loadCosts) cost(k int) float64 { return l.d.loadCost(&l.vs[k], l.reqBlocks) }

// dynamoLeg is one leg's indexes.
type dynamoLeg struct {
	full   rankTree // by the cost without a prefix (fullKey); both legs with conditional disaggregation, else the prefill leg
	load   rankTree // by the decode load (loadKey); the decode leg
	active minTree  // active prefill tokens
	pos    []int32  // by instance index: the view's position in the leg, −1 for none
	within []bool   // by position: active prefill at or under the queue threshold
	under  int      // positions within it
}

// ReadsInstanceState implements InstanceStateReader: the cost reads only
// the router's bookkeeping; the decode busy threshold also reads the
// blocks in use each worker last reported (FreeBlocks), and output-block
// tracking the output its requests generated, which the core reads from
// the instances at each refresh.
func (d *Dynamo) ReadsInstanceState() bool {
	return d.cfg.ActiveDecodeBlocksThreshold != nil || d.cfg.TrackOutputBlocks
}

// Reindex implements Indexer.
func (d *Dynamo) Reindex(c *Cluster) {
	if d.ix == nil {
		d.ix = &dynamoIndex{}
	}
	for leg, vs := range [][]View{c.Prefill, c.Decode} {
		l := &d.ix.legs[leg]
		l.pos = l.pos[:0]
		for k := range vs {
			for len(l.pos) <= vs[k].Index {
				l.pos = append(l.pos, -1)
			}
			l.pos[vs[k].Index] = int32(k)
		}
		l.within, l.under = l.within[:0], 0
		for k := range vs {
			l.within = append(l.within, false)
			d.ix.setWithin(d, leg, k, &vs[k])
		}
		l.active.reset(len(vs), func(k int) float64 { return float64(vs[k].ActivePrefillTokens) })
		decode := leg == 1
		if !decode || d.cfg.ConditionalDisagg {
			l.full.reset(len(vs), func(k int) rankKey { return d.fullKey(&vs[k], c.BlockSize) })
		}
		if decode {
			l.load.reset(len(vs), func(k int) rankKey { return d.loadKey(&vs[k]) })
		}
	}
}

// Changed implements Indexer.
func (d *Dynamo) Changed(c *Cluster, decode bool, k int) {
	leg, vs := 0, c.Prefill
	if decode {
		leg, vs = 1, c.Decode
	}
	v := &vs[k]
	l := &d.ix.legs[leg]
	d.ix.setWithin(d, leg, k, v)
	l.active.set(k, float64(v.ActivePrefillTokens))
	if !decode || d.cfg.ConditionalDisagg {
		l.full.set(k, d.fullKey(v, c.BlockSize))
	}
	if decode {
		l.load.set(k, d.loadKey(v))
	}
}

// setWithin notes whether the view at position k of the leg is within
// the queue threshold (holds).
func (ix *dynamoIndex) setWithin(d *Dynamo, leg, k int, v *View) {
	l := &ix.legs[leg]
	in := float64(v.ActivePrefillTokens) <= d.cfg.QueueThreshold*float64(v.MaxBatchedTokens)
	if in != l.within[k] {
		l.within[k] = in
		if in {
			l.under++
		} else {
			l.under--
		}
	}
}

// fullKey orders workers by their cost without a prefix less what every
// such worker adds alike; its other components are that cost's inputs,
// so that workers with equal keys cost the same.
func (d *Dynamo) fullKey(v *View, blockSize int) rankKey {
	active, blocks := float64(v.ActivePrefillTokens), float64(v.ActiveBlocks)
	requests := d.cfg.DecodeActiveRequestWeight * float64(v.Outstanding)
	return rankKey{d.cfg.PrefillLoadScale*(active/float64(blockSize)) + (blocks + requests), active, blocks, requests}
}

// loadKey orders decoders by their load-only cost less the request's
// blocks.
func (d *Dynamo) loadKey(v *View) rankKey {
	blocks := float64(v.ActiveBlocks)
	requests := d.cfg.DecodeActiveRequestWeight * float64(v.Outstanding)
	return rankKey{blocks + requests, blocks, requests}
}

// indexable reports whether the indexes can stand in for a scan of the
// full cost for r.
func (d *Dynamo) indexable(r *Request, c *Cluster) bool {
	switch {
	case d.ix == nil || d.scan || d.cfg.Temperature > 0:
		return false
	case d.index == nil && c.TierOverlap != nil: // every worker may hold blocks in a lower tier
		return false
	case len(r.Hashes) > 0 && d.index == nil && c.Caching == nil:
		return false
	}
	return !d.reuses(c) || c.Sharing != nil
}

// reuses reports whether a worker's new blocks count only those no active
// request there holds (newBlocks).
func (d *Dynamo) reuses(c *Cluster) bool { return d.cfg.AssumeKVReuse && c.NewBlocks != nil }

// pickIndexed is pick from the indexes.
func (d *Dynamo) pickIndexed(r *Request, c *Cluster, decode bool) (k, overlap int) {
	l, vs := &d.ix.legs[0], c.Prefill
	if decode {
		l, vs = &d.ix.legs[1], c.Decode
	}
	_, least := l.active.min()
	minActive := int(least)
	x := d.priceSpecial(r, c, l, vs, minActive, false)
	d.ix.full = fullCosts{d: d, r: r, c: c, vs: vs, minActive: minActive}
	x.tree, x.costs = &l.full, &d.ix.full
	x.shared = d.cfg.PrefillLoadScale*float64(r.PromptTokens)/float64(c.BlockSize) + float64(r.PromptTokens/c.BlockSize)
	k = d.ch.minCostIndexed(x)
	d.ix.full = fullCosts{} // keeps nothing of the request
	return k, d.specialOverlap(k)
}

// priceSpecial lists the candidates of leg l (views vs) the prompt's
// prefix counts on, with their overlaps and costs — the full cost, or
// with decode Dynamo's decode branch — for the choice from the indexes.
func (d *Dynamo) priceSpecial(r *Request, c *Cluster, l *dynamoLeg, vs []View, minActive int, decode bool) *indexedCosts {
	x := &d.ix.pick
	x.special = d.prefixed(x.special[:0], r, c, l)
	x.specialCosts, d.overlaps = x.specialCosts[:0], d.overlaps[:0]
	for _, k := range x.special {
		o := d.overlap(r, c, vs[k].Index)
		d.overlaps = append(d.overlaps, o)
		if decode {
			x.specialCosts = append(x.specialCosts, d.decodeLogit(r, c, &vs[k], o))
		} else {
			x.specialCosts = append(x.specialCosts, d.fullCost(r, c, &vs[k], o, minActive))
		}
	}
	return x
}

// specialOverlap is the overlap priceSpecial found for candidate k, or 0
// when the prefix does not count on it.
func (d *Dynamo) specialOverlap(k int) int {
	if j := slices.Index(d.ix.pick.special, k); j >= 0 {
		return d.overlaps[j]
	}
	return 0
}

// pickDecodeIndexed is pickDecode from the indexes.
func (d *Dynamo) pickDecodeIndexed(r *Request, c *Cluster) int {
	reqBlocks := r.PromptTokens / c.BlockSize
	x := &d.ix.pick
	x.special, x.specialCosts = x.special[:0], x.specialCosts[:0]
	d.ix.load = loadCosts{d: d, vs: c.Decode, reqBlocks: reqBlocks}
	x.tree, x.costs, x.shared = &d.ix.legs[1].load, &d.ix.load, float64(reqBlocks)
	return d.ch.minCostIndexed(x)
}

// prefixed appends to dst, in increasing order, the positions in leg l of
// the workers r's prefix may count on: those that may hold its first
// block (device overlap) and those where an active request shares it
// (new blocks).
func (d *Dynamo) prefixed(dst []int, r *Request, c *Cluster, l *dynamoLeg) []int {
	ix := d.ix
	ix.insts = ix.insts[:0]
	switch {
	case len(r.Hashes) == 0:
	case d.index != nil:
		ix.insts = d.index.Holders(ix.insts, r.Hashes, c.NowNs)
	default:
		ix.insts = c.Caching(ix.insts, r.Hashes)
	}
	if d.reuses(c) {
		ix.insts = c.Sharing(ix.insts, r)
	}
	for _, i := range ix.insts {
		if i < len(l.pos) && l.pos[i] >= 0 {
			dst = append(dst, int(l.pos[i]))
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// peekDecoderIndexed is peekDecoder from the indexes: a decoder the
// prefix does not count on costs its load plus R, so the load order
// stands in for the rest.
func (d *Dynamo) peekDecoderIndexed(r *Request, c *Cluster) (k, overlap int) {
	l, vs := &d.ix.legs[1], c.Decode
	x := d.priceSpecial(r, c, l, vs, 0, true)
	reqBlocks := r.PromptTokens / c.BlockSize
	d.ix.load = loadCosts{d: d, vs: vs, reqBlocks: reqBlocks}
	x.tree, x.costs, x.shared = &l.load, &d.ix.load, float64(reqBlocks)
	k = d.ch.minCostIndexed(x)
	return k, d.specialOverlap(k)
}
