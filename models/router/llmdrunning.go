package router

// ScorerRunningRequests is llm-d's running-requests-size-scorer
// (llm-d-inference-scheduler, pkg/epp/framework/plugins/scheduling/scorer/
// runningrequests/runningrequest.go, RunningRequestsSizeScorer.Score):
// min-max over the candidates' running sequences (vLLM's
// num_requests_running, at the last refresh), fewer is better, 1 for every
// candidate when all counts are equal — the queue scorer's formula on the
// running set.
const ScorerRunningRequests = "running-requests"

// runningScores: the running-requests scorer's raw values.
func runningScores(dst []float64, vs []View) []float64 {
	return minMaxScores(dst, vs, func(v *View) int { return v.Running })
}
