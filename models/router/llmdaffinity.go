package router

import "handoff/models/strictyaml"

// PrefixAffinity is llm-d's prefix-cache-affinity-filter
// (llm-d-inference-scheduler, pkg/epp/framework/plugins/scheduling/filter/
// prefixcacheaffinity/plugin.go, Plugin.Filter): before the scorers, keep
// only the candidates whose approximate prefix score (matched blocks /
// request blocks, the prefix-cache scorer's value) reaches
// AffinityThreshold — unless none does, there is one candidate or fewer,
// the threshold is 0, or a draw below ExplorationProbability lets every
// candidate through. The scorers then normalise over the kept candidates
// only. Upstream's TTFT gate (MaxTTFTPenaltyMs) reads the latency
// predictor's estimates, which handoff does not model; without them it
// never opens, as here.
type PrefixAffinity struct {
	AffinityThreshold      float64 `yaml:"affinity_threshold"`      // in [0, 1]; 0 keeps every candidate
	ExplorationProbability float64 `yaml:"exploration_probability"` // in [0, 1]
}

// DefaultPrefixAffinity returns llm-d's DefaultConfig: 0.8 and 0.01.
func DefaultPrefixAffinity() PrefixAffinity {
	return PrefixAffinity{AffinityThreshold: 0.8, ExplorationProbability: 0.01}
}

// Check validates the filter; errors name the field relative to it.
func (f *PrefixAffinity) Check() error {
	switch {
	case !(f.AffinityThreshold >= 0 && f.AffinityThreshold <= 1):
		return strictyaml.Fieldf("affinity_threshold", "must be in [0, 1], got %g", f.AffinityThreshold)
	case !(f.ExplorationProbability >= 0 && f.ExplorationProbability <= 1):
		return strictyaml.Fieldf("exploration_probability", "must be in [0, 1], got %g", f.ExplorationProbability)
	}
	return nil
}

// affinityFilter returns vs, or the candidates the prefix-affinity filter
// keeps, copied into l's scratch; kept maps a kept candidate's position to
// its position in vs (nil when vs is returned whole).
func (l *LLMD) affinityFilter(r *Request, vs []View) (out []View, kept []int) {
	f := l.cfg.PrefixAffinity
	if f == nil || len(vs) <= 1 || f.AffinityThreshold <= 0 {
		return vs, nil
	}
	if l.ch.rng.Float64() < f.ExplorationProbability {
		return vs, nil
	}
	l.kept, l.sticky = l.kept[:0], l.sticky[:0]
	for k := range vs {
		if l.prefixScore(r, vs[k].Index) >= f.AffinityThreshold {
			l.kept, l.sticky = append(l.kept, k), append(l.sticky, vs[k])
		}
	}
	if len(l.kept) == 0 {
		return vs, nil
	}
	return l.sticky, l.kept
}
