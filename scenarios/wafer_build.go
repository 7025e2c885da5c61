package scenarios

import (
	"fmt"
	"math"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
	"handoff/models/perf"
	"handoff/sim"
)

// slotsKVBytes is the KV a layout's slots hold when every slot is full:
// Σ count · KV bytes of a sequence of the slot's context (all layers;
// sliding-window layers capped at their window).
func slotsKVBytes(m *llm.Model, layout []SlotClass) float64 {
	total := 0.0
	for _, sc := range layout {
		total += float64(sc.Count) * m.KVBytesForContext(sc.Context)
	}
	return total
}

// checkWaferFit checks that the weights fit in wafers × SRAM and that
// every layout's slots fit in the SRAM left after them. The catalog's
// memory is taken as wholly usable (it is the usable figure);
// engine.memory_utilization does not apply to a wafer. at ends in ".wafer".
func (l *Loaded) checkWaferFit(at string, w *WaferPool, dev hardware.Accelerator, m *llm.Model) error {
	sram := float64(w.Wafers) * dev.MemoryBytes
	weights := m.WeightBytesTotal()
	mem := parallel.Pipeline(w.Wafers).Memory(m, dev.MemoryBytes, 1, 1)
	if mem.Budget < 0 {
		return l.errorf(at+".wafers", "%s's %.1f GB of weights do not fit in %d wafers of %s (%.1f GB of SRAM): "+
			"over by %.1f GB; at least %d wafers are needed", m.Name, weights/1e9, w.Wafers, dev.Name, sram/1e9,
			(weights-sram)/1e9, int(math.Ceil(weights/dev.MemoryBytes)))
	}
	free := mem.Budget * float64(w.Wafers)
	for i, layout := range append([][]SlotClass{w.Slots}, w.Layouts...) {
		field := at + ".slots"
		if i > 0 {
			field = fmt.Sprintf("%s.layouts[%d]", at, i-1)
		}
		kv := slotsKVBytes(m, layout)
		if kv <= free {
			continue
		}
		hint := ""
		if len(layout) == 1 {
			hint = fmt.Sprintf("; at most %d slots of %d tokens fit",
				int(free/m.KVBytesForContext(layout[0].Context)), layout[0].Context)
		}
		return l.errorf(field, "the slots need %.2f GB of KV but %d wafers of %s leave %.2f GB of SRAM after "+
			"%s's %.1f GB of weights: over by %.2f GB%s", kv/1e9, w.Wafers, dev.Name, free/1e9, m.Name,
			weights/1e9, (kv-free)/1e9, hint)
	}
	return nil
}

// waferMaxLen returns the engine's max_model_len for a wafer pool: the
// longest slot when the scenario does not give one. A slot longer than
// the model's context, or a max_model_len longer than every slot (requests
// that long could never be admitted), is an error.
func (l *Loaded) waferMaxLen(at string, p *Pool, m *llm.Model, layouts [][]SlotClass) (int, error) {
	longest := 0
	for i, layout := range layouts {
		for k, sc := range layout {
			if sc.Context > m.MaxContext {
				field := fmt.Sprintf("%s.wafer.slots[%d].context", at, k)
				if i > 0 {
					field = fmt.Sprintf("%s.wafer.layouts[%d][%d].context", at, i-1, k)
				}
				return 0, l.errorf(field, "%d tokens is longer than %s's context of %d", sc.Context, m.Name, m.MaxContext)
			}
			longest = max(longest, sc.Context)
		}
	}
	want := p.Engine.MaxModelLen
	if want == 0 {
		return longest, nil
	}
	if want > longest {
		return 0, l.errorf(at+".engine.max_model_len", "%d tokens is longer than any slot (the longest holds %d): "+
			"such requests could never be admitted; add a larger slot class or lower max_model_len", want, longest)
	}
	return want, nil
}

// waferTimer builds the wafer step-time model with the scenario's
// overrides of the catalog figures.
func (l *Loaded) waferTimer(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator,
	m *llm.Model) (perf.StepTimer, error) {
	w, st := p.Wafer, p.StepTime
	cfg := perf.WaferConfig{Model: m, Device: dev, Wafers: w.Wafers, MFU: st.MFU, MBU: st.MBU, StepOverheadNs: -1}
	if st.StepOverhead != nil {
		cfg.StepOverheadNs = int64(*st.StepOverhead)
	}
	if w.LayerLatency != nil {
		cfg.LayerLatencyNs = int64(*w.LayerLatency)
	}
	if w.WidthLatency != nil {
		cfg.WidthLatencyNs = int64(*w.WidthLatency)
	}
	if w.PrefillEfficiency != nil {
		cfg.PrefillEfficiency = *w.PrefillEfficiency
	}
	if w.Wafers > 1 {
		link, err := hw.Link(dev.Wafer.PipelineLink)
		if err != nil {
			return nil, l.errorf(at+".wafer.wafers", "%d wafers are pipelined over %s's pipeline_link: %v",
				w.Wafers, dev.Name, err)
		}
		cfg.Link = link
	}
	x, err := perf.NewWafer(cfg)
	if err != nil {
		return nil, l.errorf(at+".wafer", "%v", err)
	}
	return x, nil
}

// applyWafer sets a wafer pool's instance template: the wafers it
// occupies, the KV staging rate on a decoder (KV made by another kind of
// device is re-laid-out for the slots), and the reject phase.
func applyWafer(p *Pool, dev hardware.Accelerator, inst *sim.Instance) {
	w := p.Wafer
	inst.GPUs = w.Wafers
	inst.RejectPhase = w.RejectPhase
	if p.Role != "decode" {
		return
	}
	inst.StagingBps = dev.Wafer.StagingBps
	if w.StagingRate != nil {
		inst.StagingBps = float64(*w.StagingRate)
	}
}

// layout is how one instance of p spreads the model over its devices:
// its wafers pipelined, or its tp, dp, ep and pp.
func (p *Pool) layout() parallel.Layout {
	if p.Wafer != nil {
		return parallel.Pipeline(p.Wafer.Wafers)
	}
	return parallel.Layout{TP: p.TP, DP: p.DP, EP: p.EP, PP: max(p.PP, 1)}
}

// devices is how many accelerators one instance of p occupies.
func (p *Pool) devices() int { return p.layout().Devices() }
