package parallel

import (
	"fmt"
	"strconv"
	"strings"

	"handoff/models/llm"
)

// Layout is how one instance splits a model over its devices.
//
// An instance is DP × TP × PP devices. Every data-parallel rank holds the
// attention and every other non-expert weight, sharded over its TP
// devices, and runs its own scheduler over its own KV cache, as each DP
// rank is its own engine core in vLLM (vllm/v1/engine/core.py,
// DPEngineCoreProc) and SGLang. The MoE layers of all ranks form one
// group: with EP = 1 the routed experts are sharded by TP like every other
// weight; with EP > 1 they are spread whole over the EP = DP × TP devices,
// as vLLM's --enable-expert-parallel does (the expert-parallel size is the
// DP × TP world, FusedMoEParallelConfig in
// vllm/model_executor/layers/fused_moe/config.py). PP > 1 splits the
// layers into that many stages (StageLayers), each on its own TP devices:
// a GPU engine then keeps up to PP micro-batches in flight, one per stage,
// as vLLM's batch queue does; a wafer pool's stages are its wafers.
type Layout struct {
	TP int // tensor-parallel degree inside each data-parallel rank, ≥ 1
	DP int // data-parallel attention ranks, ≥ 1
	EP int // expert-parallel degree of the MoE layers: 1, or DP × TP
	PP int // pipeline stages, ≥ 1
}

// Tensor is the layout of tp tensor-parallel devices and nothing else.
func Tensor(tp int) Layout { return Layout{TP: tp, DP: 1, EP: 1, PP: 1} }

// Pipeline is the layout of stages pipelined devices (wafers).
func Pipeline(stages int) Layout { return Layout{TP: 1, DP: 1, EP: 1, PP: stages} }

// Devices is the accelerators one instance occupies: DP × TP × PP.
func (l Layout) Devices() int { return l.DP * l.TP * l.PP }

// RankDevices is the accelerators of one data-parallel rank: TP × PP.
func (l Layout) RankDevices() int { return l.TP * l.PP }

// ExpertShards is how many ways the routed experts are split: EP when
// expert parallel, else TP (each expert's matrices sharded like the rest).
func (l Layout) ExpertShards() int {
	if l.EP > 1 {
		return l.EP
	}
	return l.TP
}

// String names the layout by its degrees above 1, "tp1" when none:
// "tp4", "dp8·tp1·ep8", "pp4".
func (l Layout) String() string {
	var parts []string
	for _, d := range []struct {
		name string
		v    int
	}{{"dp", l.DP}, {"tp", l.TP}, {"ep", l.EP}, {"pp", l.PP}} {
		if d.v > 1 || d.name == "tp" && l.DP > 1 {
			parts = append(parts, d.name+strconv.Itoa(d.v))
		}
	}
	if len(parts) == 0 {
		return "tp1"
	}
	return strings.Join(parts, "·")
}

// FieldError is a layout refused for a model: the degree at fault ("tp",
// "dp", "ep" or "pp") and why.
type FieldError struct {
	Field string
	Msg   string
}

// Error names the degree and the reason: "ep: ep 3 does not divide …".
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func refuse(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Check reports whether m can be served with layout l: every degree at
// least 1; tp legal for the model (llm.Model.CheckTP); ep only for a MoE
// model, equal to dp × tp and dividing its routed experts, so that every
// rank holds the same share; dp > 1 only for a MoE model with ep = dp ×
// tp (DP attention around one expert-parallel group — a dense model's
// data-parallel ranks are separate instances: raise count); pp at most
// the layers (vLLM splits them unevenly when pp does not divide them:
// StageLayers) and not with dp > 1. Errors are *FieldError.
func (l Layout) Check(m *llm.Model) error {
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", l.TP}, {"dp", l.DP}, {"ep", l.EP}, {"pp", l.PP}} {
		if d.v < 1 {
			return refuse(d.name, "must be at least 1, got %d", d.v)
		}
	}
	if err := m.CheckTP(l.TP); err != nil {
		return refuse("tp", "%v", err)
	}
	switch {
	case l.PP > m.Layers:
		return refuse("pp", "pp %d exceeds %s's %d layers: every stage needs at least one", l.PP, m.Name, m.Layers)
	case l.PP > 1 && l.DP > 1:
		return refuse("pp", "pp %d with dp %d: pipeline stages of data-parallel ranks are not modelled", l.PP, l.DP)
	}
	return l.checkExperts(m)
}

// checkExperts is Check's rules for dp and ep.
func (l Layout) checkExperts(m *llm.Model) error {
	moe := m.Experts > 0
	switch {
	case l.EP > 1 && !moe:
		return refuse("ep", "%s is dense: expert parallelism needs routed experts", m.Name)
	case l.DP > 1 && !moe:
		return refuse("dp", "%s is dense: its data-parallel ranks share nothing, so they are separate "+
			"instances (raise count instead)", m.Name)
	case l.DP > 1 && l.EP == 1:
		return refuse("ep", "dp %d needs ep = dp × tp = %d: data-parallel attention around tensor-parallel "+
			"experts is not modelled", l.DP, l.DP*l.TP)
	case l.EP > 1 && l.EP != l.DP*l.TP:
		return refuse("ep", "ep %d must equal dp × tp = %d (vLLM's expert-parallel group is the DP × TP world)",
			l.EP, l.DP*l.TP)
	case l.EP > 1 && m.Experts%l.EP != 0:
		return refuse("ep", "ep %d does not divide %s's %d routed experts (each rank holds an equal share)",
			l.EP, m.Name, m.Experts)
	}
	return nil
}

// Describe names the layout for people: "TP 4", or "DP 8 × TP 1, EP 8".
func (l Layout) Describe() string {
	s := "TP " + strconv.Itoa(l.TP)
	if l.DP > 1 {
		s = "DP " + strconv.Itoa(l.DP) + " × " + s
	}
	if l.EP > 1 {
		s += ", EP " + strconv.Itoa(l.EP)
	}
	if l.PP > 1 {
		s += ", PP " + strconv.Itoa(l.PP)
	}
	return s
}
