package sim

import (
	"fmt"

	"handoff/models/router"
)

// refreshViews copies every instance's state into the routing view. The
// view is exact (an oracle router); stale views come with the router models
// that need them.
func (c *cluster) refreshViews() {
	for k, i := range c.prefillIdx {
		c.view.Prefill[k] = c.viewOf(i)
	}
	for k, i := range c.decodeIdx {
		c.view.Decode[k] = c.viewOf(i)
	}
}

func (c *cluster) viewOf(i int) router.View {
	in := c.insts[i]
	pool := in.Pool()
	return router.View{Index: i, Waiting: in.Waiting(), Running: in.Running(),
		Outstanding: c.outstanding[i], FreeBlocks: pool.FreeBlocks(),
		TotalBlocks: pool.NumBlocks(), BlockSize: pool.BlockSize()}
}

// tooLong explains why no instance of the cluster could ever serve r, or
// returns "".
func (c *cluster) tooLong(r *Request) string {
	need := r.PromptTokens + r.OutputTokens
	best := 0
	for _, i := range c.legFor(len(c.decodeIdx) > 0) {
		best = max(best, c.cfg.Instances[i].Engine.CapacityTokens())
	}
	if need > best {
		return fmt.Sprintf("too long: %d tokens (prompt %d + output %d) exceed the %d any instance can hold",
			need, r.PromptTokens, r.OutputTokens, best)
	}
	return ""
}

// legFor returns the instances that must hold a request's whole context:
// the decoders when disaggregated, else the colocated instances.
func (c *cluster) legFor(disaggregated bool) []int {
	if disaggregated {
		return c.decodeIdx
	}
	return c.prefillIdx
}

// doesNotFit explains why the routed instances cannot hold r, or returns "".
func (c *cluster) doesNotFit(r *Request, d router.Decision) string {
	p := c.cfg.Instances[d.Prefill]
	if d.Decode < 0 {
		if capTokens := p.Engine.CapacityTokens(); r.PromptTokens+r.OutputTokens > capTokens {
			return fmt.Sprintf("too long for %s: %d tokens exceed its %d", p.Name, r.PromptTokens+r.OutputTokens, capTokens)
		}
		return ""
	}
	if capTokens := p.Engine.CapacityTokens(); r.PromptTokens+1 > capTokens {
		return fmt.Sprintf("too long for %s: prompt of %d tokens exceeds its %d", p.Name, r.PromptTokens, capTokens)
	}
	dc := c.cfg.Instances[d.Decode]
	if capTokens := dc.Engine.CapacityTokens(); r.PromptTokens+r.OutputTokens > capTokens {
		return fmt.Sprintf("too long for %s: %d tokens exceed its %d", dc.Name, r.PromptTokens+r.OutputTokens, capTokens)
	}
	return ""
}
