package scenarios

import "slices"

// acceptanceSet is a published measurement of a drafter's per-position
// acceptance, as conditional rates: the i-th draft token's acceptance
// given the earlier ones were accepted. vLLM reports per-position rates
// unconditionally (accepted at position i over drafts: SpecDecodingStats,
// vllm/v1/spec_decode/metrics.py), so a_i = p_i / p_{i−1}.
type acceptanceSet struct {
	method string
	rates  []float64
	source string
}

// acceptanceSets are the named sets a pool's acceptance may give.
var acceptanceSets = map[string]acceptanceSet{
	// DeepSeek-V3 technical report (arXiv 2412.19437), §5.4.3: the
	// second token's acceptance "ranges between 85% and 90%"; 0.85, the
	// low end. Later positions reuse the one MTP layer (vLLM PR #13626);
	// their conditional rates scale by those vLLM measured for MTP with 8
	// positions (PR #48892, gsm8k, temperature 0: 76.17, 61.58, 51.25,
	// 42.43, 36.40, 30.94, 27.22, 23.65% per position), as ratios.
	"deepseek-v3-mtp": {method: "mtp", rates: []float64{0.85, 0.8085, 0.8323, 0.8279, 0.8579, 0.85, 0.8798, 0.8689},
		source: "DeepSeek-V3 report §5.4.3; later positions as vLLM PR #48892"},
	// vLLM's EAGLE-3 acceptance regression test on MT-Bench, k = 3,
	// temperature 0 (tests/v1/spec_decode/test_acceptance_length.py,
	// EAGLE3_MODEL_CONFIGS: expected_acceptance_lengths_per_pos).
	"llama-3.1-8b-eagle3": {method: "eagle3", rates: []float64{0.7296, 0.7138, 0.6807},
		source: "vLLM test_acceptance_length.py: 0.7296, 0.5208, 0.3545 per position"},
	"qwen3-8b-eagle3": {method: "eagle3", rates: []float64{0.6541, 0.6105, 0.5059},
		source: "vLLM test_acceptance_length.py: 0.6541, 0.3993, 0.2020 per position"},
	"gpt-oss-20b-eagle3": {method: "eagle3", rates: []float64{0.7165, 0.7146, 0.6518},
		source: "vLLM test_acceptance_length.py: 0.7165, 0.5120, 0.3337 per position"},
}

func acceptanceSetNames() []string {
	names := make([]string, 0, len(acceptanceSets))
	for n := range acceptanceSets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
