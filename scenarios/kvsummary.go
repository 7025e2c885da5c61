package scenarios

import (
	"fmt"
	"strings"

	"handoff/models/engine"
)

// KVCapacity describes each pool's KV memory per instance, one line per
// pool in scenario order, for a reader checking that the sizing is
// plausible (handoff validate): the blocks and the tokens of context they
// hold, how a hybrid model's blocks are shared (engine/sliding.go), and
// the longest sequence an instance takes; for wafer-scale pools, the
// compiled slots.
func (b *Built) KVCapacity() []string {
	var lines []string
	seen := map[string]bool{}
	for _, in := range b.Config.Instances {
		if seen[in.Pool] {
			continue
		}
		seen[in.Pool] = true
		line := b.kvLine(in.Engine)
		if in.DPRanks > 1 {
			line = strings.Replace(line, "per instance", fmt.Sprintf("per data-parallel rank (%d ranks an instance, %d device(s) each)",
				in.DPRanks, in.GPUs), 1)
		}
		lines = append(lines, fmt.Sprintf("pool %s, %s: %s", in.Pool, b.PoolEngines[in.Pool], line))
	}
	return lines
}

// kvLine is one pool's KVCapacity line.
func (b *Built) kvLine(c engine.Config) string {
	if len(c.Layouts) > 0 {
		var slots []string
		for _, sc := range c.Layouts[0] {
			slots = append(slots, fmt.Sprintf("%d × %d tokens", sc.Count, sc.ContextTokens))
		}
		return fmt.Sprintf("sequence slots %s; the longest sequence %d tokens", strings.Join(slots, ", "), c.CapacityTokens())
	}
	line := fmt.Sprintf("%d KV blocks of %d tokens per instance, %d tokens of context", c.NumBlocks, c.BlockSize,
		c.NumBlocks*c.BlockSize)
	if c.SlidingGroups == 0 && b.Model.SlidingLayers > 0 && len(c.Layouts) == 0 {
		line += fmt.Sprintf(" (a block holds all %d layers: the hybrid KV cache manager is off beside the KV connector, "+
			"engine.hybrid_kv_with_connector)", b.Model.Layers)
	}
	if c.SlidingGroups > 0 {
		g := b.Model.KVGroups()
		long := c.MaxModelLen // a sequence past its window: its sliding groups' blocks beside its table
		window := c.BlocksHeld(long) - (long+c.BlockSize-1)/c.BlockSize
		line += fmt.Sprintf(" (a block holds %d of %d layers; each sequence's %d sliding-window group(s) of %d tokens "+
			"take up to %d blocks besides)", g.LayersPerGroup, b.Model.Layers, c.SlidingGroups, c.SlidingWindow, window)
	}
	return line + fmt.Sprintf("; the longest sequence %d tokens", c.CapacityTokens())
}
