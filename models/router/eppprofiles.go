package router

import (
	"fmt"
	"slices"
)

// eppLeg is what one scheduling profile sets: its scorers in order and
// its picker.
type eppLeg struct {
	scorers   []WeightedScorer
	picker    string
	affinity  *PrefixAffinity
	fitFilter bool // a context-length-aware plugin with enableFiltering is referenced
}

// same reports whether two legs score, filter and pick alike.
func (a eppLeg) same(b eppLeg) bool {
	return a.picker == b.picker && slices.Equal(a.scorers, b.scorers) && a.fitFilter == b.fitFilter &&
		(a.affinity == nil) == (b.affinity == nil) && (a.affinity == nil || *a.affinity == *b.affinity)
}

// profiles reads the scheduling profiles. handoff applies one scorer list
// and one picker to both legs, so a prefill and a decode profile must
// agree (the prefix-affinity filter too); a profile without a picker gets llm-d's max-score picker, and a
// scorer without a weight weighs 1 (the config loader's defaults).
func (e *eppReader) profiles(cfg *LLMDConfig) error {
	var first eppLeg
	for i, p := range e.doc.SchedulingProfiles {
		at := fmt.Sprintf("schedulingProfiles[%d]", i)
		leg, err := e.profile(at, p)
		if err != nil {
			return err
		}
		if i == 0 {
			first = leg
			continue
		}
		if !leg.same(first) {
			return e.errorf(at+".plugins", "profile %q scores, filters or picks unlike profile %q: handoff applies one "+
				"scorer list, prefix-affinity filter and picker to both legs", p.Name, e.doc.SchedulingProfiles[0].Name)
		}
	}
	if len(first.scorers) == 0 {
		return e.errorf("schedulingProfiles[0].plugins", "no scorer: handoff needs at least one")
	}
	cfg.Scorers, cfg.Picker, cfg.PrefixAffinity = first.scorers, first.picker, first.affinity
	cfg.ContextLengthFilter = first.fitFilter
	return nil
}

// profile reads one profile's plugin references.
func (e *eppReader) profile(at string, p eppProfile) (eppLeg, error) {
	leg := eppLeg{picker: PickerMaxScore}
	pickers := 0
	for j, ref := range p.Plugins {
		field := fmt.Sprintf("%s.plugins[%d]", at, j)
		if ref.PluginRef == "" {
			return leg, e.errorf(field+".pluginRef", "is required: the name of a plugin declared in plugins")
		}
		k, ok := e.byName[ref.PluginRef]
		if !ok {
			return leg, e.errorf(field+".pluginRef", "no plugin named %q is declared in plugins", ref.PluginRef)
		}
		t := eppTypes[e.doc.Plugins[k].Type]
		if ref.Weight != nil && t.kind != eppScorer {
			return leg, e.errorf(field+".weight", "only a scorer has a weight; %q is a %s", ref.PluginRef, e.doc.Plugins[k].Type)
		}
		switch t.kind {
		case eppScorer:
			w := 1.0
			if ref.Weight != nil {
				w = *ref.Weight
			}
			if !weightOK(w) {
				return leg, e.errorf(field+".weight", "must be in [0, %g], got %g", MaxWeight, w)
			}
			if slices.ContainsFunc(leg.scorers, func(s WeightedScorer) bool { return s.Name == t.maps }) {
				return leg, e.errorf(field+".pluginRef", "scorer %s is referenced twice in the profile", t.maps)
			}
			leg.scorers = append(leg.scorers, WeightedScorer{Name: t.maps, Weight: w})
			leg.fitFilter = leg.fitFilter || e.filtering[ref.PluginRef] // the plugin filters as well as scores
		case eppAffinity:
			if leg.affinity != nil {
				return leg, e.errorf(field+".pluginRef", "a profile has one prefix-cache-affinity-filter")
			}
			f := e.affinity[ref.PluginRef]
			leg.affinity = &f
		case eppPicker:
			if pickers++; pickers > 1 {
				return leg, e.errorf(field+".pluginRef", "a profile has one picker")
			}
			leg.picker = t.maps
		}
	}
	return leg, nil
}
