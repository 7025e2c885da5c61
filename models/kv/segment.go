package kv

// Segment is a run of prompt tokens that share one content identity: two
// prompts that begin with the same segments (same IDs and lengths) begin with
// the same tokens, so their KV blocks hash alike and can be shared through the
// prefix cache. A trace's prefix-block ids, a shared system prompt, or a
// request's own unique text each become one Segment.
type Segment struct {
	ID     uint64
	Tokens int
}
