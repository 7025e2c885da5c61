package draft

import (
	"fmt"
	"slices"

	"handoff/models/llm"
)

// MTP drafts with the target's own multi-token-prediction module, as vLLM
// runs DeepSeek-V3/R1's (method mtp, formerly deepseek_mtp:
// vllm/model_executor/models/deepseek_mtp.py). The module is one decoder
// layer of the target (a MoE layer for DeepSeek) fed by a projection of
// the target's hidden state and the next token's embedding (eh_proj, 2h ×
// h), sharing the target's embedding and LM head (DeepSeek-V3 technical
// report, §2.2). vLLM reuses the one layer for every draft position when
// k exceeds the checkpoint's num_nextn_predict_layers (PR #13626), so k
// is bounded only by the rejection sampler.
type MTP struct{}

// mtpModels are the catalog models whose checkpoints ship MTP modules
// (num_nextn_predict_layers in their config.json): DeepSeek-V3 and R1
// (1), Kimi-K2 ships none, GLM-4.5 (1).
var mtpModels = []string{"deepseek-v3", "deepseek-r1", "glm-4.5"}

// Name is "mtp".
func (MTP) Name() string { return "mtp" }

// MaxTokens is the rejection sampler's limit.
func (MTP) MaxTokens(*llm.Model) int { return MaxSpecLen }

// Check refuses a model without MTP modules.
func (MTP) Check(target *llm.Model) error {
	if !slices.Contains(mtpModels, target.Name) {
		return fmt.Errorf("method mtp needs a model whose checkpoint has MTP modules (%v), not %s", mtpModels, target.Name)
	}
	return nil
}

// Lookahead: vLLM runs MTP through its EAGLE path (use_eagle()).
func (MTP) Lookahead() bool { return true }

// UsesModel is false: the module is the target's.
func (MTP) UsesModel() bool { return false }

// Network is one MoE decoder layer of the target plus eh_proj and the
// shared LM head.
func (MTP) Network(target, _ *llm.Model) *llm.Model {
	h, v := float64(target.Hidden), float64(target.Vocab)
	return layerOf(target, target.Name+"-mtp", 2*h*h+v*h)
}
