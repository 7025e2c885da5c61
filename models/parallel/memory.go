package parallel

import "handoff/models/llm"

// Memory is what one device of an instance holds under a layout.
type Memory struct {
	WeightBytes     float64 // the device's share of the weights, bytes
	KVBytesPerToken float64 // KV bytes per token on the device (sliding layers counted as full)
	BlockBytes      float64 // one KV block on the device: one KV cache group's layers (llm.Model.KVBlockBytesPerShard)
	Budget          float64 // bytes left for KV: memory × utilization − WeightBytes; negative when the weights do not fit
	Blocks          float64 // KV blocks of one data-parallel rank, Budget / BlockBytes (not rounded or capped)
}

// WeightBytes is one device's share of m's weights under l: the
// non-expert weights over TP, the routed experts over ExpertShards, and
// of that the largest PP stage's share (1/PP when PP divides the layers;
// StageLayers). Without expert parallelism (and with one stage) every
// weight is sharded by TP, WeightBytesTotal/TP. Weights are spread over
// the stages by layers: the embedding and LM head, which vLLM keeps on
// the first and last stages, are spread with them.
func (l Layout) WeightBytes(m *llm.Model) float64 {
	if l.ExpertShards() == l.TP {
		if l.PP > 1 && m.Layers%l.PP != 0 {
			return l.stageShare(m, m.WeightBytesTotal()/float64(l.TP))
		}
		return m.WeightBytesTotal() / float64(l.TP*l.PP)
	}
	return l.stageShare(m, m.SharedBytesTotal()/float64(l.TP)+m.ExpertBytesTotal()/float64(l.EP))
}

// Memory sizes one device of an instance with deviceBytes of memory of
// which the engine may use the share utilization, in KV blocks of
// blockSize tokens (per TP rank, device memory × utilization minus that
// rank's weights, divided into blocks; activations and CUDA graphs, which
// vLLM also reserves, are not subtracted). A block holds one KV cache
// group's layers, as in vLLM's get_kv_cache_config_from_groups
// (vllm/v1/core/kv_cache_utils.py: num_blocks = memory // (page size ×
// layers per group)). Under pipeline parallelism every stage sizes its
// own pool and vLLM keeps the smallest (get_kv_cache_configs in
// vllm/v1/core/kv_cache_utils.py takes the minimum num_blocks over the
// workers): the largest stage's, which holds the most weights and the
// most KV per token (StageLayers). It panics if blockSize < 1.
func (l Layout) Memory(m *llm.Model, deviceBytes, utilization float64, blockSize int) Memory {
	w := l.WeightBytes(m)
	mem := Memory{WeightBytes: w, KVBytesPerToken: l.stageShare(m, m.KVBytesPerTokenPerShard(l.TP)),
		BlockBytes: l.stageShare(m, m.KVBlockBytesPerShard(l.TP, blockSize)),
		Budget:     deviceBytes*utilization - w}
	mem.Blocks = mem.Budget / mem.BlockBytes
	return mem
}

// Wire is the KV a prefill-to-decode transfer moves into one instance, per
// prompt token: PerToken bytes for every token and WindowPerToken for each
// of at most the last WindowTokens (a hybrid model's sliding-window layers,
// of which vLLM's NIXL connector sends the last cdiv(window, block)+1
// blocks only: blocks_per_sw).
type Wire struct {
	PerToken       float64
	WindowPerToken float64
	WindowTokens   int
}

// Wire is the KV a decoder with layout l pulls per prompt token. vLLM's
// NixlConnector moves KV rank by rank: each of the receiving data-parallel
// rank's TP devices pulls the shard it holds
// (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py and its
// TP mapping, which lets the decoder's TP exceed the prefiller's), so KV
// the ranks replicate — an MLA latent, or KV heads when tp exceeds them —
// crosses the wire once per rank: TP × the shard a rank holds, whatever
// the prefiller's layout. It panics if blockSize < 1.
func (l Layout) Wire(m *llm.Model, blockSize int) Wire {
	ranks := float64(l.TP)
	if m.SlidingLayers == 0 {
		return Wire{PerToken: ranks * m.KVBytesPerTokenPerShard(l.TP)}
	}
	perLayer := m.KVBytesPerLayerTokenPerShard(l.TP)
	return Wire{PerToken: ranks * float64(m.FullLayers()) * perLayer,
		WindowPerToken: ranks * float64(m.SlidingLayers) * perLayer,
		WindowTokens:   m.SlidingWindowTokens(blockSize)}
}
