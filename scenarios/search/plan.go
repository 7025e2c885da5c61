package search

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"handoff/models/strictyaml"
)

// Plan is a scenario's plan block: for each pool to vary, by name, the
// range of instance counts and the hardware, TP and PP choices to try.
// Pools and fields left out keep the scenario's value.
//
//	plan:
//	  pools:
//	    prefill: {count: [1, 8], hardware: [h100-sxm, h200], tp: [1, 2]}
//	    decode:  {count: [1, 8], tp: [4, 8], pp: [1, 2]}
type Plan struct {
	Pools map[string]PlanPool `yaml:"pools"`
}

// PlanPool is one pool's choices in a Plan. The planner prices every
// variant by building the scenario with it, so a TP the scenario refuses
// (one vLLM cannot shard the model's heads over, or one beyond the
// accelerator's scale-up domain) is dropped with a note and never
// proposed; this package has no model or catalog to check it against.
type PlanPool struct {
	Count    []int    `yaml:"count,omitempty"`    // [min, max] instances; omitted = the scenario's count
	Hardware []string `yaml:"hardware,omitempty"` // accelerator names; omitted = the scenario's
	TP       []int    `yaml:"tp,omitempty"`       // tensor-parallel degrees; omitted = the scenario's
	PP       []int    `yaml:"pp,omitempty"`       // pipeline stages; omitted = the scenario's
}

// MaxCount bounds a pool's instance count in a plan, as the scenario
// loader bounds the instances of a whole scenario.
const MaxCount = 1024

// ScenarioPool is what a Space needs of one scenario pool.
type ScenarioPool struct {
	Name     string
	Count    int
	Hardware string
	TP       int
	PP       int // pipeline stages; 0 = 1
}

// Variant is one hardware, TP and PP choice for a pool's instances.
type Variant struct {
	Hardware    string
	TP          int
	PP          int     // pipeline stages, ≥ 1
	CostPerHour float64 // one instance, USD per hour: its devices × the accelerator's cost_per_hour; set by the caller
	Devices     int     // devices one instance occupies (dp × tp × pp); set by the caller, 0 = TP × PP
}

// PoolSpace is one pool's choices: its variants and its count range.
type PoolSpace struct {
	Name               string
	Variants           []Variant // at least one
	MinCount, MaxCount int       // 1 ≤ MinCount ≤ MaxCount
}

// Space is the set of fleets a plan searches: every combination of one
// variant and one count per pool, pools in scenario order.
type Space struct {
	Pools []PoolSpace
}

// Space resolves the plan against the scenario's pools. A pool the plan
// leaves out keeps its scenario values, except that its count ranges over
// defaultCount (a [min, max] pair; nil = fixed) — how a command line widens
// a scenario without a plan block. p may be nil. Errors are
// *strictyaml.FieldError naming the field under "plan" without file or line, for
// the caller to place. Variant costs are left 0.
func (p *Plan) Space(pools []ScenarioPool, defaultCount []int) (Space, error) {
	var named map[string]PlanPool
	if p != nil {
		named = p.Pools
	}
	names := make([]string, len(pools))
	for i, sp := range pools {
		names[i] = sp.Name
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if !slices.Contains(names, name) {
			return Space{}, strictyaml.Fieldf("plan.pools."+name, "no pool named %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	var s Space
	for _, sp := range pools {
		pp, ok := named[sp.Name]
		if !ok && defaultCount != nil {
			pp.Count = defaultCount
		}
		ps, err := pp.resolve(sp)
		if err != nil {
			return Space{}, err
		}
		s.Pools = append(s.Pools, ps)
	}
	return s, nil
}

// resolve checks one pool's choices and fills omitted ones from the scenario.
func (pp PlanPool) resolve(sp ScenarioPool) (PoolSpace, error) {
	at := "plan.pools." + sp.Name
	ps := PoolSpace{Name: sp.Name, MinCount: sp.Count, MaxCount: sp.Count}
	if pp.Count != nil {
		if len(pp.Count) != 2 || pp.Count[0] < 1 || pp.Count[0] > pp.Count[1] || pp.Count[1] > MaxCount {
			return ps, strictyaml.Fieldf(at+".count", "want [min, max] with 1 ≤ min ≤ max ≤ %d, got %s", MaxCount, flowList(pp.Count, "%d"))
		}
		ps.MinCount, ps.MaxCount = pp.Count[0], pp.Count[1]
	}
	hws := orDefault(pp.Hardware, sp.Hardware)
	tps := orDefault(pp.TP, sp.TP)
	pps := orDefault(pp.PP, max(sp.PP, 1))
	if i := firstDuplicate(hws); i >= 0 || slices.Contains(hws, "") {
		return ps, strictyaml.Fieldf(at+".hardware", "want distinct accelerator names, got %s", flowList(hws, "%q"))
	}
	if i := firstDuplicate(tps); i >= 0 || slices.Min(tps) < 1 {
		return ps, strictyaml.Fieldf(at+".tp", "want distinct positive degrees, got %s", flowList(tps, "%d"))
	}
	if i := firstDuplicate(pps); i >= 0 || slices.Min(pps) < 1 {
		return ps, strictyaml.Fieldf(at+".pp", "want distinct positive stage counts, got %s", flowList(pps, "%d"))
	}
	for _, hw := range hws {
		for _, tp := range tps {
			for _, stages := range pps {
				ps.Variants = append(ps.Variants, Variant{Hardware: hw, TP: tp, PP: stages})
			}
		}
	}
	return ps, nil
}

// flowList writes xs as the scenario writes a list, "[1, 2]", each
// element in format.
func flowList[T any](xs []T, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// orDefault returns xs, or a list of just d when xs is empty.
func orDefault[T any](xs []T, d T) []T {
	if len(xs) == 0 {
		return []T{d}
	}
	return xs
}

// firstDuplicate returns the index of the first repeated value, or -1.
func firstDuplicate[T comparable](xs []T) int {
	for i, x := range xs {
		if slices.Index(xs, x) < i {
			return i
		}
	}
	return -1
}

// Fleet is one point of a Space: per pool, in Space order, the index of
// its variant and its instance count.
type Fleet struct {
	Variant []int
	Count   []int
}

// Clone returns a copy that shares nothing with f.
func (f Fleet) Clone() Fleet {
	return Fleet{Variant: slices.Clone(f.Variant), Count: slices.Clone(f.Count)}
}

// CostPerHour is the fleet's price, USD per hour: Σ count × the variant's
// per-instance cost. O(pools).
func (s Space) CostPerHour(f Fleet) float64 {
	var c float64
	for i, p := range s.Pools {
		c += float64(f.Count[i]) * p.Variants[f.Variant[i]].CostPerHour
	}
	return c
}

// GPUs is the fleet's accelerator count: Σ count × devices per instance
// (dp × tp × pp). O(pools).
func (s Space) GPUs(f Fleet) int {
	n := 0
	for i, p := range s.Pools {
		v := p.Variants[f.Variant[i]]
		d := v.Devices
		if d == 0 {
			d = v.TP * max(v.PP, 1)
		}
		n += f.Count[i] * d
	}
	return n
}

// Describe names the fleet for people: "prefill 2×h100-sxm/tp1 + decode 3×h200/tp2",
// a pipeline's stages after its TP: "decode 2×h100-sxm/tp8/pp2".
func (s Space) Describe(f Fleet) string {
	parts := make([]string, len(s.Pools))
	for i, p := range s.Pools {
		v := p.Variants[f.Variant[i]]
		parts[i] = fmt.Sprintf("%s %d×%s/tp%d", p.Name, f.Count[i], v.Hardware, v.TP)
		if v.PP > 1 {
			parts[i] += "/pp" + strconv.Itoa(v.PP)
		}
	}
	return strings.Join(parts, " + ")
}

// Key is a compact unique key of the fleet, for memoising runs.
func (f Fleet) Key() string {
	var b strings.Builder
	for i := range f.Count {
		b.WriteString(strconv.Itoa(f.Variant[i]) + ":" + strconv.Itoa(f.Count[i]) + ";")
	}
	return b.String()
}
