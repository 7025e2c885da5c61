package llm

import "math"

// Stage returns the part of m that one pipeline stage of layers layers
// runs: a copy with that many layers and every per-layer figure scaled by
// layers/m.Layers — parameters (and so weights and FLOPs per token), the
// dense and sliding-window layers (rounded to the nearest) — while the
// widths (hidden, heads, experts, top-k) stay. The embedding and LM head
// are spread with the layers. It panics unless 1 ≤ layers ≤ m.Layers.
func (m *Model) Stage(layers int) *Model {
	if layers < 1 || layers > m.Layers {
		panic("llm: a stage needs between 1 and the model's layers")
	}
	if layers == m.Layers {
		return m
	}
	f := float64(layers) / float64(m.Layers)
	cp := *m
	cp.Layers = layers
	cp.ParamsTotal, cp.ParamsActive = m.ParamsTotal*f, m.ParamsActive*f
	cp.DenseLayers = int(math.Round(float64(m.DenseLayers) * f))
	cp.SlidingLayers = int(math.Round(float64(m.SlidingLayers) * f))
	return &cp
}
