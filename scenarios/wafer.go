package scenarios

import (
	"fmt"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/perf"
	"handoff/models/units"
)

// WaferPool is the compiled configuration of a pool whose hardware is of
// kind wafer (DESIGN.md "Wafer-scale SRAM decoder"): the model's weights
// pipelined over Wafers wafers, and a fixed set of sequence slots whose KV
// shares the SRAM left after the weights. There is no paged pool, so no
// preemption: PressurePolicy says what happens when no slot fits.
type WaferPool struct {
	Wafers         int           `yaml:"wafers"`            // pipeline stages per instance
	Slots          []SlotClass   `yaml:"slots"`             // the layout an instance starts with
	Layouts        [][]SlotClass `yaml:"layouts,omitempty"` // recompile: the other layouts it may switch to
	PressurePolicy string        `yaml:"pressure_policy"`   // queue | reject | recompile
	// RecompileTime is the pause of a drain-and-recompile (recompile only).
	RecompileTime units.Duration `yaml:"recompile_time,omitempty"`
	RejectPhase   int            `yaml:"reject_phase,omitempty"` // reject: 1 re-run, 2 re-send with delivered tokens
	// Overrides of the catalog's wafer figures; omitted = catalog value.
	StagingRate       *units.Bandwidth `yaml:"staging_rate,omitempty"`  // KV re-layout on arrival; 0 = none
	LayerLatency      *units.Duration  `yaml:"layer_latency,omitempty"` // per decoder layer, fixed part
	WidthLatency      *units.Duration  `yaml:"width_latency,omitempty"` // per decoder layer, per 1,000 of hidden
	PrefillEfficiency *float64         `yaml:"prefill_efficiency,omitempty"`
}

// SlotClass is Count identical slots, each holding a sequence of up to
// Context tokens (prompt plus output).
type SlotClass struct {
	Count   int `yaml:"count"`
	Context int `yaml:"context"`
}

// Wafer pool defaults and limits.
const (
	defaultWaferPressure   = "queue"
	defaultWaferPreemption = "none" // the only preemption value a wafer pool takes
	defaultWaferStepTime   = "wafer"
	maxWafers              = 64
	maxSlotContext         = 1 << 24 // tokens; beyond any model's context
)

var pressurePolicies = map[string]engine.Pressure{
	"queue": engine.PressureQueue, "reject": engine.PressureReject, "recompile": engine.PressureRecompile,
}

// waferDefaults fills a wafer pool's omitted keys; at ends with '.'.
func (l *Loaded) waferDefaults(at string, p *Pool) {
	w := p.Wafer
	fill(l, at+"preemption", &p.Preemption, defaultWaferPreemption)
	fill(l, at+"step_time.model", &p.StepTime.Model, defaultWaferStepTime)
	fill(l, at+"wafer.wafers", &w.Wafers, 1)
	fill(l, at+"wafer.pressure_policy", &w.PressurePolicy, defaultWaferPressure)
	if w.PressurePolicy == "reject" {
		fill(l, at+"wafer.reject_phase", &w.RejectPhase, defaultRejectPhase)
	}
}

// validateWafer checks what a wafer pool can without the catalogs: the
// wafer block's shape and the pool settings a wafer does not have.
func (l *Loaded) validateWafer(at string, p *Pool) error {
	w := p.Wafer
	if p.Preemption != defaultWaferPreemption || p.Swap != nil || p.Reject != nil {
		return l.errorf(at+".preemption", "a wafer has no paged KV pool, so nothing to preempt, swap or reject "+
			"mid-flight: drop preemption (and swap/reject) and choose wafer.pressure_policy: queue, reject or recompile")
	}
	if p.StepTime.Model != defaultWaferStepTime {
		return l.errorf(at+".step_time.model", "a wafer pool's step time is the wafer model, not %s: "+
			"drop step_time.model (mfu, mbu and step_overhead still apply)", p.StepTime.Model)
	}
	if p.TP != 1 {
		return l.errorf(at+".tp", "a wafer pool is sized by wafer.wafers, not tp (got tp %d)", p.TP)
	}
	switch {
	case w.Wafers < 1 || w.Wafers > maxWafers:
		return l.errorf(at+".wafer.wafers", "must be in [1, %d], got %d", maxWafers, w.Wafers)
	case len(w.Slots) == 0:
		return l.errorf(at+".wafer.slots", "at least one slot class is required (e.g. [{count: 12, context: 8192}])")
	}
	if err := l.validateSlots(at+".wafer.slots", w.Slots); err != nil {
		return err
	}
	for i, layout := range w.Layouts {
		field := fmt.Sprintf("%s.wafer.layouts[%d]", at, i)
		if len(layout) == 0 {
			return l.errorf(field, "a layout needs at least one slot class")
		}
		if err := l.validateSlots(field, layout); err != nil {
			return err
		}
	}
	return l.validatePressure(at, p)
}

// validateSlots checks one layout's slot classes.
func (l *Loaded) validateSlots(at string, classes []SlotClass) error {
	for k, sc := range classes {
		switch {
		case sc.Count < 1 || sc.Count > maxBlocks:
			return l.errorf(fmt.Sprintf("%s[%d].count", at, k), "must be in [1, %d], got %d", maxBlocks, sc.Count)
		case sc.Context < 1 || sc.Context > maxSlotContext:
			return l.errorf(fmt.Sprintf("%s[%d].context", at, k), "must be in [1, %d] tokens, got %d",
				maxSlotContext, sc.Context)
		}
	}
	return nil
}

// validatePressure checks the pressure policy and the settings that go
// with it.
func (l *Loaded) validatePressure(at string, p *Pool) error {
	w := p.Wafer
	at += ".wafer"
	policy, ok := pressurePolicies[w.PressurePolicy]
	switch {
	case !ok:
		return l.errorf(at+".pressure_policy", "unknown policy %q (known: queue, reject, recompile)", w.PressurePolicy)
	case policy == engine.PressureRecompile && len(w.Layouts) == 0:
		return l.errorf(at+".layouts", "pressure_policy recompile needs at least one layout to recompile to "+
			"(e.g. layouts: [[{count: 3, context: 32768}]])")
	case policy == engine.PressureRecompile && w.RecompileTime <= 0:
		return l.errorf(at+".recompile_time", "pressure_policy recompile needs a positive pause (e.g. 30s)")
	case policy != engine.PressureRecompile && (w.RecompileTime != 0 || len(w.Layouts) > 0):
		return l.errorf(at+".pressure_policy", "layouts and recompile_time go with pressure_policy recompile, not %s",
			w.PressurePolicy)
	case policy == engine.PressureReject && p.Role != "decode":
		return l.errorf(at+".pressure_policy", "reject hands requests back to the router and needs a decode pool, not %s",
			p.Role)
	case policy == engine.PressureReject && w.RejectPhase != 1 && w.RejectPhase != 2:
		return l.errorf(at+".reject_phase", "must be 1 (re-run the request) or 2 (re-send it with its tokens), got %d",
			w.RejectPhase)
	case policy != engine.PressureReject && w.RejectPhase != 0:
		return l.errorf(at+".reject_phase", "goes with pressure_policy reject, not %s", w.PressurePolicy)
	case w.StagingRate != nil && !(*w.StagingRate >= 0):
		return l.errorf(at+".staging_rate", "must not be negative")
	case w.LayerLatency != nil && *w.LayerLatency <= 0:
		return l.errorf(at+".layer_latency", "must be positive")
	case w.WidthLatency != nil && *w.WidthLatency <= 0:
		return l.errorf(at+".width_latency", "must be positive")
	case w.PrefillEfficiency != nil && !inUnit(*w.PrefillEfficiency):
		return l.errorf(at+".prefill_efficiency", "must be in (0, 1], got %g", *w.PrefillEfficiency)
	}
	return nil
}

// checkWaferKind requires a wafer block exactly on pools of wafer hardware.
func (l *Loaded) checkWaferKind(at string, p *Pool, dev hardware.Accelerator) error {
	isWafer := dev.Kind == hardware.KindWafer
	switch {
	case isWafer && p.Wafer == nil:
		return l.errorf(at+".hardware", "%s is a wafer (no paged KV pool): the pool needs a wafer block, "+
			"e.g. wafer: {wafers: 4, slots: [{count: 12, context: 8192}], pressure_policy: queue}", dev.Name)
	case !isWafer && p.Wafer != nil:
		return l.errorf(at+".wafer", "applies to wafer hardware only; %s is kind %s", dev.Name, dev.Kind)
	}
	return nil
}

// waferEngine builds a wafer pool's slot-mode engine configuration and its
// step timer, after checking that the weights and every layout's slots fit
// the wafers' SRAM.
func (l *Loaded) waferEngine(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator,
	m *llm.Model) (engine.Config, perf.StepTimer, error) {
	w := p.Wafer
	layouts := append([][]SlotClass{w.Slots}, w.Layouts...)
	maxLen, err := l.waferMaxLen(at, p, m, layouts)
	if err != nil {
		return engine.Config{}, nil, err
	}
	if err := l.checkWaferFit(at+".wafer", w, dev, m); err != nil {
		return engine.Config{}, nil, err
	}
	e := p.Engine
	cfg := engine.Config{MaxBatchedTokens: e.MaxNumBatchedTokens, MaxSeqs: e.MaxNumSeqs, BlockSize: e.BlockSize,
		MaxModelLen: maxLen, NoChunkedPrefill: !*e.ChunkedPrefill, Layouts: engineLayouts(layouts),
		Pressure: pressurePolicies[w.PressurePolicy], RecompileNs: int64(w.RecompileTime),
		Rules: engine.Rules{SharedQueue: e.RemoteKVQueue == "shared"}}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, l.errorf(at+".engine", "%v", err)
	}
	timer, err := l.waferTimer(at, p, hw, dev, m)
	return cfg, timer, err
}

// engineLayouts converts the scenario's layouts to the engine's.
func engineLayouts(layouts [][]SlotClass) [][]engine.SlotClass {
	out := make([][]engine.SlotClass, len(layouts))
	for i, l := range layouts {
		for _, sc := range l {
			out[i] = append(out[i], engine.SlotClass{Count: sc.Count, ContextTokens: sc.Context})
		}
	}
	return out
}
