package scenarios

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"handoff/models/autoscale"
	"handoff/models/engine"
	"handoff/models/router"
	"handoff/scenarios/workload"
)

// The packages whose structs the schema walk enters: the scenario's own
// and those whose types are its sections (workload sources, router and
// autoscaler sections, step-time specs, the plan and sweep blocks). Other
// types — units, the catalogs' entries, a sweep's axes — are leaves:
// written or not.
var schemaPackages = []string{"handoff/scenarios", "handoff/scenarios/workload", "handoff/models/router",
	"handoff/models/autoscale", "handoff/models/perf", "handoff/scenarios/search", "handoff/scenarios/sweep"}

// swarmNotDrawn lists the scenario's fields the swarm leaves out on
// purpose, each with why.
var swarmNotDrawn = map[string]string{}

// swarmFreeText lists the string fields that are not enumerated, each
// with what they hold instead; every other string field is in swarmEnums.
var swarmFreeText = map[string]string{
	"name": "a label", "pools[].name": "a label", "pools[].owner": "a label",
	"model":                                "a served model's name (the catalogs', which the scenario may extend) or a config.json",
	"pools[].hardware":                     "an accelerator's name: the catalogs'",
	"plan.pools.*.hardware":                "accelerators' names: the catalogs'",
	"link.kind":                            "a link's name: the catalogs'",
	"router.from":                          "a path to an llm-d EndpointPickerConfig: the shipped ones under epp/",
	"topology.domain_link":                 "a link's name: the catalogs'",
	"topology.node_link":                   "a link's name: the catalogs'",
	"topology.datacenter_link":             "a link's name: the catalogs'",
	"topology.datacenters":                 "names the scenario gives its datacenters",
	"pools[].placement.datacenter":         "one of topology.datacenters",
	"pools[].placement.domain":             "a name the scenario gives a domain",
	"faults.events[].instance":             "an instance of the built cluster (<pool>-<k>)",
	"faults.events[].pool":                 "one of the scenario's pools",
	"faults.events[].link":                 "a link of the built cluster's network",
	"workload.trace.path":                  "a file",
	"workload.trace.columns.timestamp":     "a column of the trace file",
	"workload.trace.columns.input_tokens":  "a column of the trace file",
	"workload.trace.columns.output_tokens": "a column of the trace file",
	"workload.trace.columns.session":       "a column of the trace file",
	"workload.trace.columns.turn":          "a column of the trace file",
	"workload.trace.columns.prefix_ids":    "a column of the trace file",
	"workload.trace.columns.class":         "a column of the trace file",
	"workload.servegen.path":               "a file's prefix",
	"workload.classes[].name":              "a label",
	"workload.servegen.paths":              "files' prefixes",
	"pools[].step_time.file":               "a file",
	"catalog.files":                        "files",
	"pools[].step_time.profile_model":      "a key of the profile file",
	"pools[].step_time.profile_hardware":   "a key of the profile file",
	"pools[].speculative.draft_model":      "a served model's name: the catalogs'",
}

// swarmEnums are the enumerated fields and their known values, each from
// the table (or the constants) its validation checks against.
var swarmEnums = map[string]func() []string{
	"pools[].role":                     func() []string { return roles },
	"pools[].dp_routing":               func() []string { return dpRoutings },
	"pools[].preemption":               func() []string { return preemptions },
	"pools[].kv_handoff":               func() []string { return kvHandoffs },
	"pools[].kv_hold.mode":             func() []string { return holdModes },
	"pools[].kv_load_failure_policy":   func() []string { return loadFailures },
	"pools[].claims":                   func() []string { return claims },
	"pools[].engine.remote_kv_queue":   func() []string { return remoteKVQueues },
	"pools[].engine.vllm":              swarmReleases,
	"pools[].engine.kind":              func() []string { return engineKinds },
	"pools[].engine.admission":         func() []string { return admissionRules },
	"pools[].engine.fenced_victim":     func() []string { return fencedVictimRules },
	"pools[].engine.scheduling_policy": engine.SchedulingPolicies,
	"pools[].step_time.model":          stepTimeNames,
	"pools[].speculative.method":       swarmDrafters,
	"pools[].precision.weights":        swarmDTypes,
	"pools[].precision.experts":        swarmDTypes,
	"pools[].precision.kv":             swarmDTypes,
	"pools[].precision.compute":        func() []string { return slices.Sorted(maps.Keys(formatBits)) },
	"pools[].placement.rule":           func() []string { return slices.Sorted(maps.Keys(placementRules)) },
	"pools[].wafer.pressure_policy":    func() []string { return slices.Sorted(maps.Keys(pressurePolicies)) },
	"pools[].kv_tiers[].tier":          func() []string { return slices.Sorted(maps.Keys(tierKinds)) },
	"pools[].kv_tiers[].offload":       offloadNames,
	"kv_store.offload":                 offloadNames,
	"pools[].autoscale.policy":         autoscaleNames,
	"pools[].autoscale.hpa.metric": func() []string {
		return []string{autoscale.MetricWaiting, autoscale.MetricRunning, autoscale.MetricKVUsage}
	},
	"HPARules.select":          hpaSelects,
	"HPARules.policies[].type": hpaSteps,
	"pools[].autoscale.sla.predictor": func() []string {
		return []string{autoscale.PredictConstant, autoscale.PredictKalman}
	},
	"router.policy": policyNames,
	"router.dynamo.conditional_disagg_policy": router.ConditionalPolicies,
	"router.dynamo.conditional_peek_cost":     func() []string { return []string{router.PeekDecode, router.PeekFull} },
	"router.dynamo.router_queue_policy":       router.QueuePolicies,
	"router.llmd.picker":                      router.PickerNames,
	"router.llmd.scorers[].name":              router.ScorerNames,
	"router.sglang.policy":                    router.SGLangPolicies,
	"router.sglang.prefill_policy":            router.SGLangPolicies,
	"router.sglang.decode_policy":             router.SGLangPolicies,
	"router.sglang.cache_miss":                router.SGLangMisses,
	"faults.events[].kind":                    func() []string { return slices.Sorted(maps.Keys(faultKinds)) },
	"workload.trace.format":                   workload.TraceFormats,
	"workload.trace.timestamp_unit":           workload.TimestampUnits,
	"Arrival.process":                         workload.Processes,
	"Length.dist":                             workload.Dists,
}

func hpaSelects() []string {
	return []string{autoscale.SelectMax, autoscale.SelectMin, autoscale.SelectDisabled}
}

func hpaSteps() []string { return []string{autoscale.StepPods, autoscale.StepPercent} }

// schemaWalk gathers, over many drawn files, which fields of the schema
// (by YAML path: "pools[].engine.block_size", a map's keys as "*") the
// files wrote, and the values written to enumerated and boolean fields.
type schemaWalk struct {
	shared map[reflect.Type]bool // sharedTypes
	set    map[string]bool
	values map[string]map[string]bool
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// entered reports whether the walk enters the fields of struct type t; a
// type that decodes itself is a leaf.
func entered(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && slices.Contains(schemaPackages, t.PkgPath()) &&
		!reflect.PointerTo(t).Implements(unmarshalerType)
}

// yamlFields calls f with the YAML key and type of each field of struct
// type t, ",inline" fields' own in their place.
func yamlFields(t reflect.Type, f func(key string, ft reflect.Type)) {
	for i := range t.NumField() {
		fd := t.Field(i)
		name, opts, _ := strings.Cut(fd.Tag.Get("yaml"), ",")
		switch {
		case !fd.IsExported() || name == "-":
		case strings.Contains(","+opts+",", ",inline,"):
			yamlFields(fd.Type, f)
		default:
			if name == "" {
				name = strings.ToLower(fd.Name)
			}
			f(name, fd.Type)
		}
	}
}

// join appends key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// elem looks through pointers, lists and maps to the type a path names,
// and the suffix each adds to the path.
func elem(t reflect.Type) (reflect.Type, string, bool) {
	switch {
	case t.Kind() == reflect.Pointer:
		return t.Elem(), "", true
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return t, "", false
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return t.Elem(), "[]", true
	case t.Kind() == reflect.Map:
		return t.Elem(), ".*", true
	}
	return t, "", false
}

// schemaFields maps every field path of the schema under type t to the
// field's type. A struct type the schema holds at several places (a
// length distribution, an arrival process, an HPA's rules, a slot class)
// has its fields under its type's name ("Length.dist"): one draw writes
// it everywhere, so its fields count wherever they are written.
func schemaFields(t reflect.Type) map[string]reflect.Type {
	shared := sharedTypes(t)
	out := map[string]reflect.Type{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		if e, suffix, ok := elem(t); ok {
			walk(path+suffix, e)
			return
		}
		if !entered(t) {
			return
		}
		if shared[t] {
			path = t.Name()
		}
		yamlFields(t, func(key string, ft reflect.Type) {
			p := join(path, key)
			out[p] = ft
			walk(p, ft)
		})
	}
	walk("", t)
	return out
}

// sharedTypes returns the struct types the schema under t holds in more
// than one field.
func sharedTypes(t reflect.Type) map[reflect.Type]bool {
	places, seen := map[reflect.Type]int{}, map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		t = leafType(t)
		if !entered(t) {
			return
		}
		if places[t]++; seen[t] {
			return
		}
		seen[t] = true
		yamlFields(t, func(_ string, ft reflect.Type) { walk(ft) })
	}
	walk(t)
	shared := map[reflect.Type]bool{}
	for ty, n := range places {
		shared[ty] = n > 1
	}
	return shared
}

// leafType is the type a path's values have, through pointers, lists and
// maps.
func leafType(t reflect.Type) reflect.Type {
	for {
		e, _, ok := elem(t)
		if !ok {
			return t
		}
		t = e
	}
}

// schemaLeaves returns the paths of fields of a kind (string, bool).
func schemaLeaves(fields map[string]reflect.Type, kind reflect.Kind) []string {
	var out []string
	for p, ft := range fields {
		if lt := leafType(ft); lt.Kind() == kind && !entered(lt) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// walk records what the document node n, at path and of type t, writes.
func (w *schemaWalk) walk(path string, t reflect.Type, n *yaml.Node) {
	if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if path != "" {
		w.set[path] = true
	}
	if n.Kind == yaml.ScalarNode { // a list's items count as its field's values
		field := strings.TrimSuffix(path, "[]")
		if w.values[field] == nil {
			w.values[field] = map[string]bool{}
		}
		w.values[field][n.Value] = true
	}
	if e, suffix, ok := elem(t); ok {
		switch {
		case suffix == "":
			w.walk(path, e, n)
		case n.Kind == yaml.SequenceNode:
			for _, c := range n.Content {
				w.walk(path+suffix, e, c)
			}
		case n.Kind == yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				w.walk(path+suffix, e, n.Content[i])
			}
		}
		return
	}
	if !entered(t) || n.Kind != yaml.MappingNode {
		return
	}
	if w.shared[t] {
		path = t.Name()
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		yamlFields(t, func(k string, ft reflect.Type) {
			if k == key {
				w.walk(join(path, key), ft, n.Content[i+1])
			}
		})
	}
}

// TestScenarioSwarmDrawsEveryField draws the default swarm's files and
// fails when a field of the scenario schema (the Scenario type and every
// section type it holds, by their YAML tags) is never written, unless
// swarmNotDrawn says why; when an enumerated field misses one of the
// values its validation knows (swarmEnums, from the tables validation
// reads); when a boolean is not written both ways; and when a string
// field is neither enumerated nor in swarmFreeText. A new field fails here
// until the draw writes it.
func TestScenarioSwarmDrawsEveryField(t *testing.T) {
	if *swarmCases < 100 {
		t.Skipf("%d cases: too few to draw everything", *swarmCases)
	}
	scenario := reflect.TypeFor[Scenario]()
	w := schemaWalk{shared: sharedTypes(scenario), set: map[string]bool{}, values: map[string]map[string]bool{}}
	for k := range uint64(*swarmCases) {
		doc, _, _ := swarmScenario(*swarmSeed+k, swarmRoot(t))
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatalf("seed %d: %v", *swarmSeed+k, err)
		}
		w.walk("", scenario, root.Content[0])
	}
	fields := schemaFields(scenario)
	all := slices.Sorted(maps.Keys(fields))
	for _, p := range all {
		if _, ok := swarmNotDrawn[p]; !ok && !w.set[p] {
			t.Errorf("%s is never drawn: draw it (swarm_draw_test.go), or say in swarmNotDrawn why not", p)
		}
	}
	checkNamed(t, all, "swarmNotDrawn", swarmNotDrawn)
	checkNamed(t, all, "swarmFreeText", swarmFreeText)
	for p, known := range swarmEnums {
		if !slices.Contains(all, p) {
			t.Errorf("swarmEnums names %s, which the scenario does not have", p)
		}
		for _, v := range known() {
			if !w.values[p][v] {
				t.Errorf("%s is never drawn as %q", p, v)
			}
		}
	}
	for _, p := range schemaLeaves(fields, reflect.String) {
		if _, ok := swarmEnums[p]; !ok && swarmFreeText[p] == "" {
			t.Errorf("string field %s is neither in swarmEnums (its known values) nor in swarmFreeText (why not)", p)
		}
	}
	for _, p := range schemaLeaves(fields, reflect.Bool) {
		if _, ok := swarmNotDrawn[p]; !ok && !(w.values[p]["true"] && w.values[p]["false"]) {
			t.Errorf("%s is not drawn both true and false: %v", p, w.values[p])
		}
	}
}

// checkNamed fails for a path a list names that the schema lacks.
func checkNamed(t *testing.T, all []string, list string, m map[string]string) {
	for p := range m {
		if !slices.Contains(all, p) {
			t.Errorf("%s names %s, which the scenario does not have", list, p)
		}
	}
}

// TestSwarmDrawersMatchSchema ties the draw's registries to the schema:
// a drawer for each top-level section of Scenario, in its order, and for
// each request source of Workload.
func TestSwarmDrawersMatchSchema(t *testing.T) {
	var keys, sections []string
	yamlFields(reflect.TypeFor[Scenario](), func(key string, _ reflect.Type) { keys = append(keys, key) })
	for _, s := range swarmSections {
		sections = append(sections, s.key)
	}
	if !slices.Equal(keys, sections) {
		t.Errorf("Scenario's sections %v, the swarm's drawers %v", keys, sections)
	}
	var sources, drawn []string
	yamlFields(reflect.TypeFor[Workload](), func(key string, ft reflect.Type) {
		if ft.Kind() == reflect.Pointer { // the sources; rate_scale and client are not
			sources = append(sources, key)
		}
	})
	for _, s := range swarmSources {
		drawn = append(drawn, s.key)
	}
	if !slices.Equal(sources, drawn) {
		t.Errorf("Workload's sources %v, the swarm's drawers %v", sources, drawn)
	}
}
