package sim

import (
	"testing"

	"handoff/models/kv"
)

// TestSharedBlocksFollowThePrefixTree: with 16-token blocks, A holds
// segments 1 (40 tokens) and 2 (40): 5 full blocks in its prefix; B holds 1
// and 3 (24): 4, of which the 2 ending in segment 1 are A's too. Together
// they hold 5 + 4 − 2 = 7 distinct prefix blocks; a prompt starting with
// segments 1 and 2 finds 5 held, one starting with 2 finds none.
func TestSharedBlocksFollowThePrefixTree(t *testing.T) {
	s := &sharedBlocks{refs: map[uint64]int32{}}
	a := []kv.Segment{{ID: 1, Tokens: 40}, {ID: 2, Tokens: 40}}
	b := []kv.Segment{{ID: 1, Tokens: 40}, {ID: 3, Tokens: 24}}
	if got := s.add(a, 16); got != 5 || s.distinct != 5 {
		t.Fatalf("A covers %d blocks, distinct %d; want 5 and 5", got, s.distinct)
	}
	if got := s.add(b, 16); got != 4 || s.distinct != 7 {
		t.Fatalf("B covers %d blocks, distinct %d; want 4 and 7", got, s.distinct)
	}
	if h := s.held(a, 16); h != 5 {
		t.Errorf("a prompt like A's finds %d blocks held, want 5", h)
	}
	if h := s.held([]kv.Segment{{ID: 2, Tokens: 40}}, 16); h != 0 {
		t.Errorf("a prompt starting with segment 2 finds %d blocks held, want 0", h)
	}
	s.remove(a, 16)
	if s.distinct != 4 || s.held(a, 16) != 2 {
		t.Errorf("after A: distinct %d, A's prefix held %d; want 4 and 2", s.distinct, s.held(a, 16))
	}
	s.remove(b, 16)
	if s.distinct != 0 || len(s.refs) != 0 {
		t.Errorf("empty: distinct %d, %d nodes", s.distinct, len(s.refs))
	}
}
