package network

import (
	"slices"
	"strings"
	"testing"
)

// domains returns the domain of each place.
func domains(ps []Place) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Domain)
	}
	return out
}

func TestPlacementRules(t *testing.T) {
	tests := []struct {
		name        string
		rule        Rule
		count, gpus int
		want        []int
	}{
		// Domains of 8 GPUs: ⌊8/2⌋ = 4 TP-2 instances each.
		{"pack tp2", RulePack, 6, 2, []int{0, 0, 0, 0, 1, 1}},
		// ⌊8/3⌋ = 2: the 2 GPUs left over stay empty.
		{"pack tp3", RulePack, 5, 3, []int{0, 0, 1, 1, 2}},
		{"pack tp8", RulePack, 2, 8, []int{0, 1}},
		{"spread", RuleSpread, 3, 1, []int{0, 1, 2}},
		{"none", RulePack, 0, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := NewPlacer(8).ByRule(1, tt.rule, tt.count, tt.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if got := domains(ps); !slices.Equal(got, tt.want) {
				t.Errorf("domains %v, want %v", got, tt.want)
			}
			for _, p := range ps {
				if p.Datacenter != 1 || p.GPUs != tt.gpus {
					t.Fatalf("place %+v, want datacenter 1 and %d GPUs", p, tt.gpus)
				}
			}
		})
	}
}

func TestRulePlacedPoolsDoNotShareDomains(t *testing.T) {
	p := NewPlacer(8)
	a, _ := p.ByRule(0, RulePack, 1, 1)
	b, _ := p.ByRule(0, RulePack, 1, 1)
	if a[0].Domain == b[0].Domain {
		t.Fatalf("two pools packed into domain %d", a[0].Domain)
	}
}

func TestNamedDomainsAreSharedAndBounded(t *testing.T) {
	p := NewPlacer(8)
	a, err := p.Named(0, "d0", 2, 2) // 4 of 8 GPUs
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Named(0, "d0", 1, 4) // 8 of 8
	if err != nil {
		t.Fatal(err)
	}
	if a[0].Domain != b[0].Domain {
		t.Fatalf("d0 opened twice: %d, %d", a[0].Domain, b[0].Domain)
	}
	other, _ := p.Named(1, "d0", 1, 1) // same name, other datacenter
	if other[0].Domain == a[0].Domain {
		t.Fatal("d0 of datacenter 1 is d0 of datacenter 0")
	}
	_, err = p.Named(0, "d0", 1, 1)
	if err == nil || !strings.Contains(err.Error(), "would hold 9 GPUs (8 already placed)") {
		t.Fatalf("over-filled domain: err %v", err)
	}
	if p.Domains() != 2 {
		t.Fatalf("%d domains, want 2", p.Domains())
	}
}

func TestInstanceLargerThanDomainIsAnError(t *testing.T) {
	if _, err := NewPlacer(8).ByRule(0, RuleSpread, 1, 16); err == nil {
		t.Fatal("16 GPUs placed in a domain of 8")
	}
	if _, err := NewPlacer(8).Named(0, "x", 1, 16); err == nil {
		t.Fatal("16 GPUs placed in a named domain of 8")
	}
}
