package results

import "fmt"

// SpecSummary is speculative decoding's outcome over the instances that
// drafted, in vLLM's terms (SpecDecodingStats and its logging in
// vllm/v1/spec_decode/metrics.py): drafts are sequence steps that verified
// draft tokens; the acceptance rate is accepted over draft tokens; the
// mean acceptance length is 1 + accepted / drafts, the tokens a verify
// step yields per sequence (the sampled one included).
type SpecSummary struct {
	Drafts           int64   `json:"drafts"`
	DraftTokens      int64   `json:"draft_tokens"`
	AcceptedTokens   int64   `json:"accepted_tokens"`
	AcceptanceRate   float64 `json:"acceptance_rate"`
	MeanAcceptLength float64 `json:"mean_acceptance_length"`
}

// summarizeSpec sums the instances' speculative counters; nil when none
// drafted.
func summarizeSpec(insts []InstanceInfo) *SpecSummary {
	var s SpecSummary
	for i := range insts {
		s.Drafts += insts[i].SpecDrafts
		s.DraftTokens += insts[i].SpecDraftTokens
		s.AcceptedTokens += insts[i].SpecAccepted
	}
	if s.Drafts == 0 {
		return nil
	}
	s.AcceptanceRate = float64(s.AcceptedTokens) / float64(s.DraftTokens)
	s.MeanAcceptLength = 1 + float64(s.AcceptedTokens)/float64(s.Drafts)
	return &s
}

// specLine is the text summary's line for s ("" for nil).
func specLine(s *SpecSummary) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%-11s acceptance %.1f%%   mean acceptance length %.2f   drafts %d   draft tokens %d   accepted %d\n",
		"speculative", 100*s.AcceptanceRate, s.MeanAcceptLength, s.Drafts, s.DraftTokens, s.AcceptedTokens)
}
