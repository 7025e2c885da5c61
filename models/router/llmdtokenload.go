package router

import "math"

// ScorerTokenLoad is llm-d's token-load-scorer (llm-d-inference-scheduler,
// pkg/epp/framework/plugins/scheduling/scorer/tokenload/token_load.go,
// TokenLoadScorer.Score): 1 for a candidate with no in-flight tokens, else
// 1 − min(load, threshold)/threshold, where load is the candidate's
// View.TokenLoad (the inflight-load producer's token tracker) and the
// threshold is TokenLoadThreshold.
const ScorerTokenLoad = "token-load"

// DefaultTokenLoadThreshold is the token-load scorer's saturation point in
// tokens: 128 requests of 32k (tokenQueueThresholdDefault).
const DefaultTokenLoadThreshold = 4194304

// EstimatedTokens is llm-d's estimate of a request's tokens for its
// in-flight load (inflightload/token_estimator.go,
// SimpleTokenEstimator.Estimate): its input plus round(1.5 × input) for
// the output. Upstream estimates the input from the body's bytes / 4;
// handoff knows the prompt's tokens.
func EstimatedTokens(prompt int) int {
	return prompt + int(math.Round(1.5*float64(prompt)))
}

// tokenLoadScores: the token-load scorer's raw values.
func tokenLoadScores(dst []float64, vs []View, threshold int) []float64 {
	for i := range vs {
		s := 1.0
		if load := vs[i].TokenLoad; load > 0 {
			s = 1 - float64(min(load, threshold))/float64(threshold)
		}
		dst = append(dst, s)
	}
	return dst
}
