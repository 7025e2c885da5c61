package scenarios

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"handoff/models/perf"
	"handoff/models/router"
	"handoff/models/strictyaml"
)

// TestRouterRegistryMatchesSchema ties the policy registry to what decodes
// and what --set reaches: every section field of Router is a registered
// section of its type, every registered section is a Router field whose
// every field --set can name, and every registered policy loads and builds
// with its sections defaulted.
func TestRouterRegistryMatchesSchema(t *testing.T) {
	rt := reflect.TypeFor[Router]()
	var fields []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "policy" || key == "refresh_interval" || key == "from" {
			continue
		}
		fields = append(fields, key)
		s := sectionNamed(key)
		if s == nil {
			t.Errorf("Router field %s (router.%s) is no registered policy's section", f.Name, key)
			continue
		}
		if got := reflect.TypeOf(s.zero()); got != f.Type {
			t.Errorf("section %s registered as %v, decoded as %v", key, got, f.Type)
		}
	}
	var registered []string
	for _, p := range routerPolicies {
		if p.section != nil {
			registered = append(registered, p.section.key)
		}
		for _, key := range p.reads {
			if sectionNamed(key) == nil {
				t.Errorf("policy %s reads section %s, which no policy registers", p.name, key)
			}
		}
	}
	if !slices.Equal(fields, registered) {
		t.Errorf("Router's sections %v, registry's %v (in file order)", fields, registered)
	}
	for _, key := range registered {
		st := reflect.TypeOf(sectionNamed(key).zero()).Elem()
		for i := range st.NumField() {
			name, _, _ := strings.Cut(st.Field(i).Tag.Get("yaml"), ",")
			if err := checkPath(reflect.TypeFor[Scenario](), "router."+key+"."+name); err != nil {
				t.Errorf("--set router.%s.%s: %v", key, name, err)
			}
		}
	}
	for _, name := range policyNames() {
		l, b, err := parseBuild(t, base+"router: {policy: "+name+"}\n", "t.yaml")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		p, _ := policy(name)
		for _, key := range append(p.reads, sectionKey(p)...) {
			if !sectionNamed(key).present(&l.Router) {
				t.Errorf("%s: section %s not created", name, key)
			}
		}
		if b.Config.Router == nil {
			t.Errorf("%s: no router built", name)
		}
	}
}

func sectionKey(p *routerPolicy) []string {
	if p.section == nil {
		return nil
	}
	return []string{p.section.key}
}

// toyConfig is a policy section a test registers.
type toyConfig struct {
	Spread float64 `yaml:"spread"`
}

func (c *toyConfig) Check() error {
	if c.Spread > 1 {
		return strictyaml.Fieldf("spread", "must be at most 1, got %g", c.Spread)
	}
	return nil
}

// TestRegisterToyPolicy registers a policy with one line: the scenario
// names it, the unknown-policy error lists it, and it builds.
func TestRegisterToyPolicy(t *testing.T) {
	saved := routerPolicies
	t.Cleanup(func() { routerPolicies = saved })
	built := false
	routerPolicies = append(slices.Clip(routerPolicies), routerPolicy{name: "toy",
		build: func(*Loaded, *Built, *rand.Rand) router.Router { built = true; return &router.LeastLoaded{} }})

	_, err := Parse([]byte(base+"router: {policy: nope}\n"), "t.yaml")
	want := `unknown policy "nope" (known: round_robin, least_loaded, power_of_two, dynamo, llmd, topology_aware, sglang, toy)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if _, _, err := parseBuild(t, base+"router: {policy: toy}\n", "t.yaml"); err != nil || !built {
		t.Fatalf("toy policy: built %v, err %v", built, err)
	}
}

// TestSectionDefaultsKeepWrittenFields: a section's Default value fills
// what the file leaves out, or writes null, and nothing it writes, even 0.
func TestSectionDefaultsKeepWrittenFields(t *testing.T) {
	l, err := Parse([]byte(base+"router: {policy: dynamo, dynamo: {overlap_score_credit: 0, ttl: null, use_kv_events: false}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := l.Router.Dynamo
	if d.OverlapScoreCredit != 0 || d.TTL != 120e9 || d.UseKVEvents || d.PrefillLoadScale != 1 || !d.AssumeKVReuse {
		t.Fatalf("dynamo = %+v", *d)
	}
}

// yamlKeys returns the YAML keys of struct t, descending into ",inline"
// fields, as the decoder reads them, and into untagged embedded ones (a
// Spec built from the section, not decoded).
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case strings.Contains(","+opts+",", ",inline,") || f.Anonymous && f.Tag.Get("yaml") == "":
			out = append(out, yamlKeys(f.Type)...)
		case f.IsExported() && name != "-":
			out = append(out, name)
		}
	}
	return out
}

// TestStepTimeRegistryMatchesSchema: every field of every registered
// model's Spec is a key of the step_time section, so the file can set it,
// and every model but the wafer's loads on a GPU pool.
func TestStepTimeRegistryMatchesSchema(t *testing.T) {
	section := yamlKeys(reflect.TypeFor[StepTime]())
	for _, m := range stepTimeModels {
		spec := reflect.TypeOf(m.spec(&StepTime{Model: m.name}))
		for _, key := range yamlKeys(spec) {
			if !slices.Contains(section, key) {
				t.Errorf("model %s reads %s, which step_time does not decode (keys %v)", m.name, key, section)
			}
		}
	}
	for _, name := range stepTimeNames() {
		if name == defaultWaferStepTime {
			continue
		}
		doc := strings.Replace(base, "role: prefill", "role: prefill\n    step_time: {model: "+name+", file: p.json}", 1)
		if _, err := Parse([]byte(doc), "t.yaml"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRegisterToyStepTime registers a step-time model with one line: the
// unknown-model error lists it and a pool may name it.
func TestRegisterToyStepTime(t *testing.T) {
	saved := stepTimeModels
	t.Cleanup(func() { stepTimeModels = saved })
	stepTimeModels = append(slices.Clip(stepTimeModels), stepTimeModel{"toy", func(st *StepTime) perf.Spec { return st.RooflineSpec }})
	doc := strings.Replace(base, "role: prefill", "role: prefill\n    step_time: {model: nope}", 1)
	_, err := Parse([]byte(doc), "t.yaml")
	want := `unknown model "nope" (known: roofline, polynomial, table, wafer, toy)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if _, _, err := parseBuild(t, strings.Replace(doc, "nope", "toy", 1), "t.yaml"); err != nil {
		t.Fatal(err)
	}
}
