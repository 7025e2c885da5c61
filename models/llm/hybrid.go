package llm

// Hybrid attention: sliding-window layers beside full-attention ones.
//
// A sliding-window layer attends only to the last SlidingWindow tokens, so
// its KV cache beyond them is never read again. gpt-oss-120b alternates
// the two kinds over its 36 layers, layer 0 sliding (layer_types in its
// Hugging Face config, the default of transformers'
// models/gpt_oss/configuration_gpt_oss.py), with a window of 128 tokens.
// vLLM's hybrid KV cache manager keeps only the window for such layers:
//
//   - Layers are grouped by attention kind into KV cache groups of equal
//     size (_get_kv_cache_groups_uniform_page_size in
//     vllm/v1/core/kv_cache_utils.py), which share one block pool: a block
//     holds one group's layers, so the pool has Layers/LayersPerGroup times
//     the blocks it would have if every block held every layer.
//   - Each group keeps its own block table per request. A sliding group
//     frees the blocks that slid out of the window
//     (SlidingWindowManager.remove_skipped_blocks in
//     vllm/v1/core/single_type_kv_cache_manager.py), so it holds about
//     cdiv(window, block)+1 blocks however long the context.
//   - NIXL sends a sliding group's last cdiv(window, block)+1 blocks only
//     (blocks_per_sw in vLLM's NIXL connector).
//
// Models without sliding layers form one group of every layer, and every
// figure below reduces to the all-layers one.

// FullLayers is the number of layers that attend to the whole context:
// Layers − SlidingLayers.
func (m *Model) FullLayers() int { return m.Layers - m.SlidingLayers }

// KVBytesPerLayerTokenPerShard is the KV bytes one layer keeps per token on
// one of tp tensor-parallel ranks (see KVBytesPerTokenPerShard). It panics
// if tp < 1.
func (m *Model) KVBytesPerLayerTokenPerShard(tp int) float64 {
	if tp < 1 {
		panic("llm: tensor-parallel degree < 1")
	}
	return m.kvPerLayerToken((m.KVHeads + tp - 1) / tp)
}

// KVBytesPerTokenFull is the KV bytes per token of the full-attention
// layers, all ranks: what every token of a context keeps. Example:
// gpt-oss-120b, 18·2·8·64·2 = 36864 B.
func (m *Model) KVBytesPerTokenFull() float64 {
	return float64(m.FullLayers()) * m.kvPerLayerToken(m.KVHeads)
}

// KVBytesPerTokenSliding is the KV bytes per token of the sliding-window
// layers, all ranks: what each token inside the window keeps besides
// KVBytesPerTokenFull. 0 without sliding layers. Example: gpt-oss-120b,
// 18·2·8·64·2 = 36864 B.
func (m *Model) KVBytesPerTokenSliding() float64 {
	return float64(m.SlidingLayers) * m.kvPerLayerToken(m.KVHeads)
}

// SlidingWindowTokens is the most tokens of a sequence that the
// sliding-window layers hold in paged blocks of blockSize tokens: the
// tokens of cdiv(window, blockSize)+1 blocks, as many as a sliding group
// keeps once its window no longer starts on a block boundary, and as many
// as vLLM's NIXL connector sends of one (blocks_per_sw). 0 for a model
// without sliding layers. Example: gpt-oss-120b in 16-token blocks, 9
// blocks = 144 tokens. It panics if blockSize < 1.
func (m *Model) SlidingWindowTokens(blockSize int) int {
	if blockSize < 1 {
		panic("llm: block size < 1")
	}
	if m.SlidingLayers == 0 {
		return 0
	}
	return ((m.SlidingWindow+blockSize-1)/blockSize + 1) * blockSize
}

// KVBytesHeld is the KV bytes, all ranks, that a sequence of tokens tokens
// holds in paged blocks of blockSize tokens, and that a KV transfer of
// those tokens moves: KVBytesPerTokenFull·tokens +
// KVBytesPerTokenSliding·min(tokens, SlidingWindowTokens(blockSize)). For a
// model without sliding layers it is tokens·KVBytesPerToken, computed the
// same way. Example: gpt-oss-120b, 100000 tokens in 16-token blocks:
// 36864·100000 + 36864·144 = 3.69 GB, against 7.37 GB with every layer
// full. It panics if blockSize < 1.
func (m *Model) KVBytesHeld(tokens, blockSize int) float64 {
	if m.SlidingLayers == 0 {
		return float64(tokens) * m.KVBytesPerToken()
	}
	sliding := min(tokens, m.SlidingWindowTokens(blockSize))
	return m.KVBytesPerTokenFull()*float64(tokens) + m.KVBytesPerTokenSliding()*float64(sliding)
}

// KVBytesHeldPerShard is KVBytesHeld on one of tp tensor-parallel ranks
// (KV heads split, or replicated past kv_heads, as in
// KVBytesPerTokenPerShard). It panics if tp < 1 or blockSize < 1.
func (m *Model) KVBytesHeldPerShard(tokens, blockSize, tp int) float64 {
	if m.SlidingLayers == 0 {
		return float64(tokens) * m.KVBytesPerTokenPerShard(tp)
	}
	perLayer := m.KVBytesPerLayerTokenPerShard(tp)
	sliding := min(tokens, m.SlidingWindowTokens(blockSize))
	return perLayer * (float64(m.FullLayers())*float64(tokens) + float64(m.SlidingLayers)*float64(sliding))
}

// KVGroups is how vLLM groups a model's layers into KV cache groups.
type KVGroups struct {
	LayersPerGroup int // layers whose KV one block holds (padding included)
	Full           int // full-attention groups
	Sliding        int // sliding-window groups
}

// KVGroups returns the model's KV cache groups as vLLM forms them
// (_get_kv_cache_groups_uniform_page_size in vllm/v1/core/kv_cache_utils.py):
// one group of every layer without sliding layers; otherwise groups of the
// smaller kind's layer count — or the larger's, when that is under 1.5
// times the smaller — with each kind split into as many groups as it
// takes, its last one padded. gpt-oss-120b: 18 layers per group, one full
// and one sliding group.
func (m *Model) KVGroups() KVGroups {
	full, sliding := m.FullLayers(), m.SlidingLayers
	if sliding == 0 {
		return KVGroups{LayersPerGroup: m.Layers, Full: 1}
	}
	if full == 0 {
		return KVGroups{LayersPerGroup: sliding, Sliding: 1}
	}
	size := min(full, sliding)
	if big := max(full, sliding); 2*big < 3*size {
		size = big
	}
	return KVGroups{LayersPerGroup: size, Full: (full + size - 1) / size, Sliding: (sliding + size - 1) / size}
}

// KVBlockBytesPerShard is the bytes one block of blockSize tokens takes on
// one of tp tensor-parallel ranks in vLLM's pool: one KV cache group's
// layers (KVGroups). For a model without sliding layers it is
// KVBytesPerTokenPerShard(tp)·blockSize, computed the same way; for
// gpt-oss-120b at TP 1, 18·2048·16 = 589824 B, half the all-layers block.
// It panics if tp < 1.
func (m *Model) KVBlockBytesPerShard(tp, blockSize int) float64 {
	if m.SlidingLayers == 0 {
		return m.KVBytesPerTokenPerShard(tp) * float64(blockSize)
	}
	return float64(m.KVGroups().LayersPerGroup) * m.KVBytesPerLayerTokenPerShard(tp) * float64(blockSize)
}

// UnifiedKV is the model as vLLM's KV cache manager sees it with the
// hybrid KV cache manager off (disable_hybrid_kv_cache_manager, which
// vLLM forces beside a KV connector until it learned to keep it): every
// sliding-window layer is turned into a full-attention one for KV
// purposes (unify_hybrid_kv_cache_specs in vllm/v1/core/kv_cache_utils.py),
// so a block holds every layer, a sequence keeps all of its tokens in
// every layer, and a KV transfer moves all of them. Only the cache
// changes: the sliding layers still attend within their window, so a step
// time is priced from the model itself, not from this one. A model
// without sliding layers is returned as it is.
func (m *Model) UnifiedKV() *Model {
	if m.SlidingLayers == 0 {
		return m
	}
	cp := *m
	cp.SlidingLayers, cp.SlidingWindow = 0, 0
	return &cp
}
