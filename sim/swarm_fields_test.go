package sim

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"handoff/models/engine"
)

// The packages whose structs the field walk enters: the simulator's
// configuration and what it holds of the engine, network and results
// packages. Interfaces (router, source, timer, tracer, sink, policy) and
// other packages' types are leaves: set or not.
var walkedPackages = []string{"handoff/sim", "handoff/models/engine", "handoff/models/network", "handoff/results"}

// swarmNotDrawn lists the fields of Config (and of what it holds) that the
// swarm leaves at zero on purpose, each with why: none is a feature a run
// can have that the swarm would miss.
var swarmNotDrawn = map[string]string{
	"Config.Instances[].Engine.Tiers[].writeFreeNs": "the tier's state during a run (when its writes queue frees), not configuration",
	"Config.shard": "set by Split.Shard for a split run's shards, which TestSplitMatchesWhole runs over the swarm",
}

// swarmEnums are the enumerated fields' types and how many values each
// has: the swarm must draw every one.
var swarmEnums = map[reflect.Type]int{
	reflect.TypeFor[Role]():                3,
	reflect.TypeFor[engine.Policy]():       3,
	reflect.TypeFor[engine.Admission]():    4,
	reflect.TypeFor[engine.FencedVictim](): 2,
	reflect.TypeFor[engine.Pressure]():     3,
	reflect.TypeFor[engine.TierKind]():     int(engine.NumTiers),
	reflect.TypeFor[engine.Offload]():      3, // on completion, on eviction, both
	reflect.TypeFor[FaultKind]():           len(faultNames),
}

// swarmKinds are the interface fields whose dynamic types the swarm must
// vary, and how many it must draw.
var swarmKinds = map[string]int{
	"Config.Router":            len(swarmRouters),
	"Config.Source":            2, // requests, sessions
	"Config.Instances[].Timer": 2, // one instance's, a data-parallel group's
	"Config.Scaling[].Policy":  1,
	"Config.Records":           1,
	"Config.Tracer":            1,
}

// fieldWalk gathers, over many configurations, which fields (by path from
// Config) ever held a non-zero value, the values of enumerated fields and
// the dynamic types of interface fields.
type fieldWalk struct {
	set    map[string]bool
	values map[string]map[uint64]bool
	kinds  map[string]map[reflect.Type]bool
}

// walked reports whether the walk enters the struct type t.
func walked(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && slices.Contains(walkedPackages, t.PkgPath())
}

// paths lists every field path under type t at path: structs entered,
// pointers, slices and arrays looked through (their elements as "[]").
func paths(dst []string, path string, t reflect.Type) []string {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		suffix := "[]"
		if t.Kind() == reflect.Pointer {
			suffix = ""
		}
		return paths(dst, path+suffix, t.Elem())
	}
	if !walked(t) {
		return dst
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		p := path + "." + f.Name
		dst = paths(append(dst, p), p, f.Type)
	}
	return dst
}

// walk records what v, at path, holds.
func (w *fieldWalk) walk(path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(path, v.Elem())
		}
		return
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(path+"[]", v.Index(i))
		}
		return
	case reflect.Interface:
		if !v.IsNil() {
			note(w.kinds, path, v.Elem().Type())
		}
		return
	}
	if _, ok := swarmEnums[v.Type()]; ok {
		note(w.values, path, v.Uint())
	}
	if !walked(v.Type()) {
		return
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Name == "_" {
			continue
		}
		p := path + "." + f.Name
		if !v.Field(i).IsZero() {
			w.set[p] = true
		}
		w.walk(p, v.Field(i))
	}
}

// note adds k to m[path].
func note[K comparable](m map[string]map[K]bool, path string, k K) {
	if m[path] == nil {
		m[path] = map[K]bool{}
	}
	m[path][k] = true
}

// TestSwarmDrawsEveryField draws the default swarm's cases and fails when
// a field of Config, or of a struct it holds (instances, engine
// configurations, tiers, slot layouts, scaling, faults, the topology, the
// client, the SLO), is never set to a non-zero value, when an enumerated
// field (role, preemption policy, pressure, tier kind, offload mode, fault
// kind) misses one of its values, or when an interface field (router,
// source, step timer…) is not drawn in its kinds. A new field fails here
// until the swarm draws it or swarmNotDrawn says why it need not.
func TestSwarmDrawsEveryField(t *testing.T) {
	w := fieldWalk{set: map[string]bool{}, values: map[string]map[uint64]bool{},
		kinds: map[string]map[reflect.Type]bool{}}
	for k := range uint64(*swarmCases) {
		w.walk("Config", reflect.ValueOf(swarmCase(t, *swarmSeed+k)).Elem())
	}
	if *swarmCases < 300 {
		t.Skipf("%d cases: too few to draw everything", *swarmCases)
	}
	all := paths(nil, "Config", reflect.TypeFor[Config]())
	for _, p := range all {
		if _, ok := swarmNotDrawn[p]; !ok && !w.set[p] {
			t.Errorf("%s is never drawn: draw it in swarmCase, or say in swarmNotDrawn why not", p)
		}
	}
	for p := range swarmNotDrawn {
		if !slices.Contains(all, p) {
			t.Errorf("swarmNotDrawn names %s, which Config does not have", p)
		}
	}
	for p, vals := range w.values {
		if want := swarmEnums[fieldType(t, p)]; len(vals) != want {
			t.Errorf("%s takes %d of its %d values", p, len(vals), want)
		}
	}
	for p, want := range swarmKinds {
		if !slices.Contains(all, p) {
			t.Errorf("swarmKinds names %s, which Config does not have", p)
		}
		if got := len(w.kinds[p]); want > 0 && got < want {
			t.Errorf("%s: %d kinds drawn, want %d", p, got, want)
		}
	}
}

// fieldType is the type of the field at path p.
func fieldType(t *testing.T, p string) reflect.Type {
	ty := reflect.TypeFor[Config]()
	for _, name := range strings.Split(p, ".")[1:] {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array {
			ty = ty.Elem()
		}
		f, ok := ty.FieldByName(strings.TrimSuffix(name, "[]"))
		if !ok {
			t.Fatalf("no field %s in %s", p, ty)
		}
		ty = f.Type
	}
	return ty
}
