package scenarios

import (
	"fmt"
	"math/rand/v2"

	"handoff/models/router"
	"handoff/models/units"
)

// The router block: router: {policy: NAME, refresh_interval, and one
// section per policy with knobs}. A section is its policy's configuration
// type in models/router, which owns its YAML fields, defaults and checks
// (router.DynamoConfig and DefaultDynamoConfig, Check); this file
// registers the policies. Sections of policies other than the chosen one
// may stay in the file (so a sweep can switch policy with --set
// router.policy=...) and are defaulted and validated all the same.

// routerPolicy is one routing policy as a scenario names it.
type routerPolicy struct {
	name string
	// section is the router block's section the policy owns (none for
	// a policy without knobs); reads lists the other policies' sections
	// it reads too. Both are created when the file leaves them out.
	section *routerSection
	reads   []string
	refresh units.Duration // router.refresh_interval when the file leaves it out; 0 = always current
	// sectionDefaults and sectionCheck run when the section is in the
	// scenario (under any policy), after its Default value fills it and
	// after its Check: for what needs the document or the cluster.
	sectionDefaults func(l *Loaded)
	sectionCheck    func(l *Loaded) error
	check           func(l *Loaded) error // when the policy is chosen, after every section
	// decodesLater says the policy picks the decoder once the prefill is
	// done (a router.DecodeRouter): decode-first decoders cannot use it.
	decodesLater bool
	// build returns the router, setting what else it asks of the core in
	// b.Config; randomness comes from rng.
	build func(l *Loaded, b *Built, rng *rand.Rand) router.Router
}

// routerPolicies is the registry of router policies, in the order errors
// list them. A new policy is a file in models/router (the router and its
// configuration: YAML fields, defaults, Check, constructor) and a line
// here; one with a section also has a field in Router, which the decoder
// and --set read, and its accessor below (TestRouterRegistryMatchesSchema
// ties them).
var routerPolicies = []routerPolicy{
	{name: "round_robin", build: func(*Loaded, *Built, *rand.Rand) router.Router { return &router.RoundRobin{} }},
	{name: "least_loaded", build: func(*Loaded, *Built, *rand.Rand) router.Router { return &router.LeastLoaded{} }},
	{name: "power_of_two", decodesLater: true,
		build: func(_ *Loaded, _ *Built, rng *rand.Rand) router.Router { return router.NewPowerOfTwo(rng) }},
	{name: "dynamo", section: newSection("dynamo", (*Router).dynamo, router.DefaultDynamoConfig),
		sectionCheck: checkConditional, build: buildDynamo, decodesLater: true},
	{name: "llmd", section: newSection("llmd", (*Router).llmd, router.DefaultLLMDConfig), refresh: defaultLLMDRefresh,
		sectionDefaults: llmdDefaults, build: buildLLMD},
	{name: "topology_aware", section: newSection("topology_aware", (*Router).topologyAware, router.DefaultTopologyAwareConfig),
		reads: []string{"dynamo"}, check: checkTopologyAware, build: buildTopologyAware},
	{name: "sglang", section: newSection("sglang", (*Router).sglang, router.DefaultSGLangConfig), build: buildSGLang},
}

// The Router fields that hold the sections, for the registry.
func (rt *Router) dynamo() **router.DynamoConfig               { return &rt.Dynamo }
func (rt *Router) llmd() **router.LLMDConfig                   { return &rt.LLMD }
func (rt *Router) topologyAware() **router.TopologyAwareConfig { return &rt.TopologyAware }
func (rt *Router) sglang() **router.SGLangConfig               { return &rt.SGLang }

// defaultLLMDRefresh is llm-d's router.refresh_interval.
const defaultLLMDRefresh = 50e6 // the EPP's metrics refresh (RefreshMetricsInterval in llm-d's pkg/epp/server/options.go)

// routerSection is one section of the router block, whatever its type.
type routerSection struct {
	key     string
	present func(rt *Router) bool
	create  func(rt *Router)            // an empty section where the file has none
	fill    func(l *Loaded, rt *Router) // defaults from the type's Default value, where the file leaves fields out
	check   func(rt *Router) error      // the type's Check; errors name fields relative to the section
	zero    func() any                  // a *T, for tests
}

// newSection registers the Router field that field returns as the
// section key, of type T with defaults def().
func newSection[T any, P interface {
	*T
	Check() error
}](key string, field func(*Router) **T, def func() T) *routerSection {
	return &routerSection{key: key,
		present: func(rt *Router) bool { return *field(rt) != nil },
		create: func(rt *Router) {
			if f := field(rt); *f == nil {
				*f = new(T)
			}
		},
		fill: func(l *Loaded, rt *Router) {
			d := def()
			fillFrom(l, "router."+key, *field(rt), &d)
		},
		check: func(rt *Router) error { return P(*field(rt)).Check() },
		zero:  func() any { return new(T) },
	}
}

// policy returns the registered policy named name.
func policy(name string) (*routerPolicy, bool) {
	for i := range routerPolicies {
		if routerPolicies[i].name == name {
			return &routerPolicies[i], true
		}
	}
	return nil, false
}

// policyNames returns the registered policies' names, in registry order.
func policyNames() []string {
	var out []string
	for _, p := range routerPolicies {
		out = append(out, p.name)
	}
	return out
}

// sectionNamed returns the registered section key, or nil.
func sectionNamed(key string) *routerSection {
	for _, p := range routerPolicies {
		if p.section != nil && p.section.key == key {
			return p.section
		}
	}
	return nil
}

// routerDefaults creates the sections the policy reads and fills every
// section present; an unknown policy is left to validate.
func (l *Loaded) routerDefaults() {
	rt := &l.Router
	if p, ok := policy(rt.Policy); ok {
		if p.section != nil {
			p.section.create(rt)
		}
		for _, key := range p.reads {
			sectionNamed(key).create(rt)
		}
		fill(l, "router.refresh_interval", &rt.RefreshInterval, p.refresh)
	}
	for _, p := range routerPolicies {
		if s := p.section; s != nil && s.present(rt) {
			s.fill(l, rt)
			if p.sectionDefaults != nil {
				p.sectionDefaults(l)
			}
		}
	}
}

// validateRouter checks the router block; validate has checked the
// policy's name. Errors name the field.
func (l *Loaded) validateRouter() error {
	rt := &l.Router
	if rt.RefreshInterval < 0 {
		return l.errorf("router.refresh_interval", "must not be negative (0 = refresh before every decision)")
	}
	for _, p := range routerPolicies {
		s := p.section
		if s == nil || !s.present(rt) {
			continue
		}
		if err := l.locate("router."+s.key, s.check(rt)); err != nil {
			return err
		}
		if p.sectionCheck != nil {
			if err := p.sectionCheck(l); err != nil {
				return err
			}
		}
	}
	if p, _ := policy(rt.Policy); p.check != nil {
		return p.check(l)
	}
	return nil
}

// buildRouter sets the configuration's router and its refresh interval,
// and collects deprecation warnings. Randomness comes from rng.
func (l *Loaded) buildRouter(b *Built, rng *rand.Rand) {
	p, _ := policy(l.Router.Policy)
	b.Config.RefreshIntervalNs = int64(l.Router.RefreshInterval)
	b.Config.Router = p.build(l, b, rng)
}

// checkConditional: conditional disaggregation needs a disaggregated
// cluster.
func checkConditional(l *Loaded) error {
	if l.Router.Dynamo.ConditionalDisagg && l.Pools[0].Role == "colocated" {
		return l.errorf("router.dynamo.conditional_disagg", "needs prefill and decode pools; this cluster is colocated")
	}
	return nil
}

func checkTopologyAware(l *Loaded) error {
	if l.Router.Dynamo.ConditionalDisagg {
		return l.errorf("router.dynamo.conditional_disagg", "does not apply to policy topology_aware, "+
			"whose (prefiller, decoder) pair search replaces it")
	}
	return nil
}

// llmdDefaults weighs 1 each llm-d scorer the file lists without
// a weight, and fills flow control's and the prefix-affinity filter's
// thresholds the file leaves out with llm-d's.
func llmdDefaults(l *Loaded) {
	for i := range l.Router.LLMD.Scorers {
		fill(l, fmt.Sprintf("router.llmd.scorers[%d].weight", i), &l.Router.LLMD.Scorers[i].Weight, 1)
	}
	if fc := l.Router.LLMD.FlowControl; fc != nil {
		def := router.DefaultFlowControl()
		fillFrom(l, "router.llmd.flow_control", fc, &def)
	}
	if f := l.Router.LLMD.PrefixAffinity; f != nil {
		def := router.DefaultPrefixAffinity()
		fillFrom(l, "router.llmd.prefix_affinity_filter", f, &def)
	}
}

// defaultScorers is llm-d's default scorer list (--set reaches into it by
// name before defaults apply).
func defaultScorers() []router.WeightedScorer { return router.DefaultLLMDConfig().Scorers }

func buildDynamo(l *Loaded, b *Built, rng *rand.Rand) router.Router {
	return router.NewDynamo(l.dynamoConfig(b), rng)
}

func buildTopologyAware(l *Loaded, b *Built, rng *rand.Rand) router.Router {
	return router.NewTopologyAware(l.dynamoConfig(b), l.Router.TopologyAware.BlocksPerMs, rng)
}

func buildSGLang(l *Loaded, _ *Built, rng *rand.Rand) router.Router {
	return router.NewSGLang(*l.Router.SGLang, rng)
}

func buildLLMD(l *Loaded, _ *Built, rng *rand.Rand) router.Router {
	return router.NewLLMD(*l.Router.LLMD, rng)
}

// dynamoConfig returns the dynamo section, with a warning for the
// deprecated weight (NewDynamo applies it over the fields it replaces),
// and asks the core to count shared blocks once when the router assumes
// KV reuse: Dynamo's decode router turns reuse off when disaggregated.
func (l *Loaded) dynamoConfig(b *Built) router.DynamoConfig {
	d := *l.Router.Dynamo
	if w := d.KVOverlapScoreWeight; w != nil {
		also := ""
		if *w == 0 {
			also = " and overlap_score_credit to 0"
		}
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s: router.dynamo.kv_overlap_score_weight is deprecated: "+
			"it sets prefill_load_scale to %g%s, overriding those fields; set them instead", l.File, *w, also))
	}
	b.Config.RouterCountsSharedBlocks = d.AssumeKVReuse && l.Pools[0].Role == "colocated"
	return d
}
