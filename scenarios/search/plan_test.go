package search

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var scenarioPools = []ScenarioPool{
	{Name: "prefill", Count: 2, Hardware: "h100-sxm", TP: 1},
	{Name: "decode", Count: 3, Hardware: "h100-sxm", TP: 2},
}

func TestPlanSpace(t *testing.T) {
	var p Plan
	doc := "pools: {prefill: {count: [1, 4], hardware: [h100-sxm, h200], tp: [1, 2]}}"
	if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	s, err := p.Space(scenarioPools, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := s.Pools[0], s.Pools[1]
	if pre.MinCount != 1 || pre.MaxCount != 4 || len(pre.Variants) != 4 || pre.Variants[1] != (Variant{Hardware: "h100-sxm", TP: 2, PP: 1}) {
		t.Errorf("prefill = %+v", pre)
	}
	if dec.MinCount != 3 || dec.MaxCount != 3 || len(dec.Variants) != 1 || dec.Variants[0] != (Variant{Hardware: "h100-sxm", TP: 2, PP: 1}) {
		t.Errorf("decode = %+v, want the scenario's, fixed", dec)
	}
	// No plan: every pool ranges over the default counts.
	s, err = (*Plan)(nil).Space(scenarioPools, []int{1, 6})
	if err != nil || s.Pools[1].MinCount != 1 || s.Pools[1].MaxCount != 6 {
		t.Errorf("default counts: %+v, %v", s, err)
	}
	f := Fleet{Variant: []int{0, 0}, Count: []int{2, 5}}
	if got := s.GPUs(f); got != 2+5*2 {
		t.Errorf("GPUs = %d, want 12", got)
	}
}

func TestPlanSpaceErrors(t *testing.T) {
	for _, tc := range []struct{ plan, want string }{
		{"{pools: {mixed: {count: [1, 2]}}}", `plan.pools.mixed: no pool named "mixed" (have prefill, decode)`},
		{"{pools: {decode: {count: [3]}}}", "plan.pools.decode.count: want [min, max] with 1 ≤ min ≤ max ≤ 1024, got [3]"},
		{"{pools: {decode: {count: [0, 2]}}}", "plan.pools.decode.count"},
		{"{pools: {decode: {count: [4, 2]}}}", "plan.pools.decode.count: want [min, max] with 1 ≤ min ≤ max ≤ 1024, got [4, 2]"},
		{"{pools: {decode: {count: [1, 5000]}}}", "plan.pools.decode.count"},
		{"{pools: {prefill: {hardware: [h200, h200]}}}", `plan.pools.prefill.hardware: want distinct accelerator names, got ["h200", "h200"]`},
		{"{pools: {prefill: {hardware: ['']}}}", "plan.pools.prefill.hardware"},
		{"{pools: {prefill: {tp: [0]}}}", "plan.pools.prefill.tp: want distinct positive"},
		{"{pools: {prefill: {tp: [2, 2]}}}", "plan.pools.prefill.tp: want distinct positive degrees, got [2, 2]"},
	} {
		var p Plan
		if err := yaml.Unmarshal([]byte(tc.plan), &p); err != nil {
			t.Fatal(err)
		}
		_, err := p.Space(scenarioPools, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.plan, err, tc.want)
		}
	}
}

// TestGPUsCountDataParallelDevices: an instance of dp × tp devices counts
// them all, not its tp.
func TestGPUsCountDataParallelDevices(t *testing.T) {
	s := Space{Pools: []PoolSpace{
		{Name: "prefill", Variants: []Variant{{Hardware: "h200", TP: 8}}, MinCount: 1, MaxCount: 2},
		{Name: "decode", Variants: []Variant{{Hardware: "h200", TP: 1, Devices: 16}}, MinCount: 1, MaxCount: 2},
	}}
	if got := s.GPUs(Fleet{Variant: []int{0, 0}, Count: []int{1, 2}}); got != 8+32 {
		t.Errorf("gpus = %d, want 40", got)
	}
}

// TestPlanPipelineStages: pp lists multiply the variants; a repeated or
// non-positive stage count is refused naming the field.
func TestPlanPipelineStages(t *testing.T) {
	s, err := (&Plan{Pools: map[string]PlanPool{"decode": {TP: []int{4, 8}, PP: []int{1, 2}}}}).Space(scenarioPools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.Pools[1].Variants; len(vs) != 4 || vs[1] != (Variant{Hardware: "h100-sxm", TP: 4, PP: 2}) {
		t.Errorf("decode variants %+v, want tp × pp", vs)
	}
	if g := s.GPUs(Fleet{Variant: []int{0, 3}, Count: []int{1, 2}}); g != 1+2*16 {
		t.Errorf("GPUs %d, want 1 + 2 × tp 8 × pp 2", g)
	}
	_, err = (&Plan{Pools: map[string]PlanPool{"decode": {PP: []int{2, 0}}}}).Space(scenarioPools, nil)
	if err == nil || !strings.Contains(err.Error(), "plan.pools.decode.pp") {
		t.Errorf("pp [2, 0]: %v, want an error naming plan.pools.decode.pp", err)
	}
}
