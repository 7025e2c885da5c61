// Package kv models an engine instance's paged KV-cache memory: a fixed pool of
// equal-sized blocks handed to sequences, with an optional prefix cache that
// lets a new sequence reuse the blocks of an earlier one whose leading tokens
// were identical.
//
// Reading guide:
//
//   - segment.go: Segment, the unit of prompt-token identity.
//   - hash.go: AppendBlockHashes, the chained identity of each full block.
//   - pool.go: Pool, reference-counted blocks, and the order of operations an
//     engine follows (Match, Acquire, Allocate, Commit, Free).
//   - index.go: the prefix cache's hash → block table (open addressing,
//     linear probing, backward-shift deletion; fixed size, no allocation).
//   - freelist.go: the free queue, a ring of block IDs with lazy deletion,
//     that doubles as the LRU eviction order of cached blocks, and the
//     fresh blocks a new pool has never handed out, which cost no memory
//     until it does (a pool is O(1) to make).
//   - tier.go: Tier, a lower KV tier (host, disk, a shared store): block
//     hashes in LRU order with a capacity, copies of what HBM offloads,
//     readable once their write lands, and room reserved for swapped KV;
//     evictlog.go, the log of hashes the pool evicts, for write-back tiers.
//   - check.go: Check, the O(blocks) invariant audit used by tests and debug runs.
//
// The semantics follow vLLM V1's KV cache manager: a block's hash chains its
// parent's hash with its own tokens, only full blocks are cached, freed cached
// blocks stay matchable at the tail of the free queue until allocation evicts
// them from the head, and the first block committed under a hash keeps it.
// Nothing here schedules events, allocates in steady state, or reads a clock.
package kv
