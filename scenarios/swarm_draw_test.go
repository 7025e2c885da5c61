package scenarios

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// The scenario swarm's draw: a scenario file from a seed, and among the
// cases every section, field and enumerated value a scenario can hold
// (TestScenarioSwarmDrawsEveryField keeps it so). The draw is driven by
// the registries validation reads: each top-level section and each request
// source has a drawer keyed by its YAML name (TestSwarmDrawersMatchSchema
// ties them to the schema's fields), and every enumerated value — router
// policies and their scorers and pickers, autoscale policies, fault kinds,
// tier kinds and offloads, step-time models, trace formats, length
// distributions, arrival processes, placement rules, pressure policies,
// roles, preemption policies — is picked from the table validation checks
// it against, so a value added there is drawn without a change here.

// swarmSection draws one top-level section of a scenario file.
type swarmSection struct {
	key  string // the section's YAML key
	draw func(d *swarmDoc)
}

// swarmSections draws a scenario file's sections in the schema's order,
// one per field of Scenario, each from a random stream of its own: a
// section drawn differently leaves the other sections' draws as they were.
var swarmSections = []swarmSection{
	{"name", func(d *swarmDoc) { d.line("name: swarm") }},
	{"seed", func(d *swarmDoc) { d.line("seed: %d", 1+d.rng.IntN(1000)) }},
	{"model", (*swarmDoc).modelSection},
	{"slo", (*swarmDoc).slo},
	{"workload", (*swarmDoc).workload},
	{"pools", (*swarmDoc).poolsSection},
	{"link", (*swarmDoc).link},
	{"topology", (*swarmDoc).topologySection},
	{"router", (*swarmDoc).router},
	{"gateway", func(d *swarmDoc) {
		switch d.rng.IntN(4) {
		case 0:
			d.line("gateway: {latency: %dus}", d.rng.IntN(5000))
		case 1:
			d.line("gateway: {latency: %dus, hop: %dus}", d.rng.IntN(5000), d.rng.IntN(3000))
		}
	}},
	{"kv_store", (*swarmDoc).kvStore},
	{"catalog", (*swarmDoc).catalogSection},
	{"metrics", (*swarmDoc).metrics},
	{"sweep", (*swarmDoc).sweep},
	{"plan", (*swarmDoc).plan},
	{"faults", (*swarmDoc).faults},
}

// swarmDoc accumulates a drawn scenario file and what later sections need
// to know of earlier ones.
type swarmDoc struct {
	rng  *rand.Rand
	root string // the scenarios folder, absolute: the file's paths are absolute
	b    strings.Builder
	tags []string

	// The case's shape, drawn before the sections.
	model     string
	hfConfig  string // "", "path" or "entry": llama-3.1-8b read from its config.json, by the model field or a catalog entry
	hybrid    bool   // gpt-oss-120b: routed experts, sliding-window layers
	catalog   string // "", "inline" or "file": the catalog entries the case uses
	pd        bool   // prefill and decode pools (else colocated)
	topology  bool   // a placed topology instead of one link kind
	source    string // the workload's request source
	blockSize int    // every pool's block size: pools sharing the store hold the same KV per block
	release   string // the vLLM release of the pool being drawn (engine.Latest: any rule value goes)
	kind      string // the engine kind of the pool being drawn
	kvDType   string // every pool's precision.kv ("": the model's): P/D pools keep one KV format
	hybridKV  string // a hybrid model's P/D pools' hybrid_kv_with_connector once the first drew it: they lay out KV alike
	spec      string // every GPU pool's speculative block once the first drew it ("none": without); swarm_spec_test.go
	split     bool   // the instances never affect one another: the run splits into shards on several cores

	// What the sections drew.
	closedLoop bool    // workload.client.concurrency > 0
	classCol   bool    // the trace's cls column names the requests' classes (c0, c1)
	fixedRate  bool    // rate_scale cannot be set: a closed loop or sessions
	rateScale  float64 // workload.rate_scale
	horizonUs  int64   // the end of the arrivals the loader checks fleet times against; 0 = unchecked
	spanUs     int64   // when the arrivals roughly end, at rate_scale
	rateRPS    float64 // the offered rate, roughly, at rate_scale
	pools      []swarmPool
	datacenter []string   // topology.datacenters
	domainSize int        // topology.domain_size
	ppRng      *rand.Rand // pipeline stages' own stream, so that drawing them moves no other draw
	store      bool       // a pool lists {tier: store}
	claimed    map[string]bool
	// The GPU pool being drawn has lower tiers, and hands off through the store.
	tiered, handoff bool
	decodeFirst     bool // a decode pool takes requests first: the router must pick decoders on arrival
}

// swarmPool is what the later sections need of a drawn pool.
type swarmPool struct {
	name, role    string
	count         int
	min, max      int // an autoscaled pool's bounds (count otherwise)
	dp, tp        int
	pp            int  // pipeline stages; 0: none drawn (one)
	roofline      bool // priced by the roofline (the only step-time model pipeline stages take)
	wafer, placed bool // a wafer pool; placed in a named domain
	hardware      string
	pinned        bool // the hardware is set by a compute format
	autoscaled    bool
}

// swarmScenario draws the scenario file of seed, the tags of what it
// exercises and its offered rate, roughly. root is the scenarios folder,
// absolute. Every draw is meant to load, build and run: sizes and times
// are chosen to fit.
func swarmScenario(seed uint64, root string) (doc string, tags []string, rateRPS float64) {
	d := &swarmDoc{root: root, rng: swarmStream(seed, "shape"), ppRng: swarmStream(seed, "pp")}
	d.shape()
	for _, s := range swarmSections {
		d.rng = swarmStream(seed, s.key)
		s.draw(d)
	}
	return d.b.String(), d.tags, d.rateRPS
}

// swarmStream is the random stream of seed for one part of the draw.
func swarmStream(seed uint64, part string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(part))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// swarmRoot is the scenarios folder, absolute (tests run in it).
func swarmRoot(t testing.TB) string {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// shape draws what several sections depend on: the model (a dense one,
// gpt-oss-120b, or a catalog's), P/D or colocated, a topology, the
// request source, the block size and the KV format.
func (d *swarmDoc) shape() {
	rng := d.rng
	switch rng.IntN(6) {
	case 0, 1:
		d.model, d.hybrid = "gpt-oss-120b", true
		d.tag("hybrid")
	case 2:
		d.catalog = pick(rng, "inline", "file")
		d.model = map[string]string{"inline": "swarm-llm", "file": "tiny-llm"}[d.catalog]
		d.tag("catalog")
	default:
		d.model = "llama-3.1-8b"
	}
	d.pd = rng.IntN(2) == 0
	d.topology = rng.IntN(3) == 0
	d.source = drawSource(rng)
	d.blockSize = []int{16, 16, 16, 8, 32}[rng.IntN(5)]
	if rng.IntN(3) == 0 {
		d.kvDType = pickOf(rng, swarmDTypes())
	}
	d.splitShape(rng)
}

// splitShape draws, last so that no other draw of the shape moves, whether
// the case keeps its instances independent (sim.NewSplit), so that a run
// on several cores splits into shards: a quarter of the cases. Such a case
// is colocated and its source paces no sessions; its sections then draw
// one colocated pool of two instances or more, round_robin, and none of
// what couples instances — data-parallel ranks, context-length ranges,
// lower tiers, autoscaling, faults, a closed loop, client timeouts.
func (d *swarmDoc) splitShape(rng *rand.Rand) {
	if d.split = rng.IntN(4) == 0; !d.split {
		return
	}
	d.tag("split")
	d.pd = false
	for d.source == "sessions" {
		d.source = drawSource(rng)
	}
}

// drawSource draws a request source: a trace twice as often as each other
// source, since its eight formats, and a generic trace's five timestamp
// units, are many values to draw.
func drawSource(rng *rand.Rand) string {
	return swarmSources[[]int{0, 1, 2, 2, 3, 4}[rng.IntN(6)]].key
}

func (d *swarmDoc) line(format string, args ...any) {
	fmt.Fprintf(&d.b, format+"\n", args...)
}

func (d *swarmDoc) tag(t string) { d.tags = append(d.tags, t) }

// path is a file of the scenarios folder, absolute.
func (d *swarmDoc) path(rel string) string { return filepath.Join(d.root, rel) }

func pick(rng *rand.Rand, options ...string) string { return options[rng.IntN(len(options))] }

func pickOf(rng *rand.Rand, options []string) string { return options[rng.IntN(len(options))] }

// some returns a random non-empty subset of options, in their order.
func some(rng *rand.Rand, options []string) []string {
	var out []string
	for len(out) == 0 {
		for _, o := range options {
			if rng.IntN(2) == 0 {
				out = append(out, o)
			}
		}
	}
	return out
}

// swarmHFConfig is llama-3.1-8b's config.json, relative to the scenarios
// folder: the swarm serves it in place of the built-in entry for some cases.
const swarmHFConfig = "testdata/hf/llama-3.1-8b-instruct.config.json"

// modelSection writes the served model: its name, or for some llama-3.1-8b
// cases its config.json — by path, or by a catalog entry that names it
// (catalogSection writes the entry).
func (d *swarmDoc) modelSection() {
	if d.model == "llama-3.1-8b" {
		d.hfConfig = pick(d.rng, "", "", "path", "entry")
	}
	switch d.hfConfig {
	case "path":
		d.tag("hf_config")
		d.line("model: %s", d.path(swarmHFConfig))
	case "entry":
		d.tag("hf_config")
		d.line("model: llama-hf")
	default:
		d.line("model: %s", d.model)
	}
}

// slo draws the latency targets and, for half the cases, the attainment.
func (d *swarmDoc) slo() {
	rng := d.rng
	attainment := ""
	if rng.IntN(2) == 0 {
		attainment = fmt.Sprintf(", attainment: %.2f", 0.5+rng.Float64()/2)
	}
	d.line("slo: {ttft: %dms, tpot: %dms%s}", 50+rng.IntN(2000), 5+rng.IntN(100), attainment)
}

// link draws one link kind (a catalog's, or the catalog section's own),
// with its figures overridden for some cases; none with a topology.
func (d *swarmDoc) link() {
	if d.topology {
		return
	}
	rng := d.rng
	kind := pick(rng, "nvlink4", "ib-ndr", "tcp-100g", "efa", "roce-400g")
	switch d.catalog {
	case "inline":
		kind = pick(rng, kind, "swarm-link")
	case "file":
		kind = pick(rng, kind, "tiny-link")
	}
	extra := ""
	if rng.IntN(3) == 0 {
		extra += fmt.Sprintf(", bandwidth: %dGB/s", 1+rng.IntN(400))
	}
	if rng.IntN(3) == 0 {
		extra += fmt.Sprintf(", latency: %dus", rng.IntN(50))
	}
	d.line("link: {kind: %s%s}", kind, extra)
}

// topologySection draws the hierarchy of a topology case: links for each
// level, datacenters (none, or named) and the domain size.
func (d *swarmDoc) topologySection() {
	if !d.topology {
		return
	}
	rng := d.rng
	d.tag("topology")
	d.line("topology:")
	d.line("  domain_link: %s", pick(rng, "nvlink4", "nvlink5"))
	d.line("  node_link: %s", pick(rng, "ib-ndr", "roce-400g", "cx7-400g"))
	d.line("  datacenter_link: %s", pick(rng, "tcp-100g", "efa"))
	if len(d.datacenter) > 0 {
		d.line("  datacenters: [%s]", strings.Join(d.datacenter, ", "))
	}
	d.line("  domain_size: %d", d.domainSize)
}

// kvStore draws the shared store when a pool lists it.
func (d *swarmDoc) kvStore() {
	if !d.store {
		return
	}
	rng := d.rng
	latency := ""
	if rng.IntN(2) == 0 {
		latency = fmt.Sprintf(", latency: %dus", rng.IntN(100))
	}
	offload := ""
	if rng.IntN(5) > 0 {
		offload = ", offload: " + pickOf(rng, offloadNames())
	}
	d.line("kv_store: {capacity: %dGB, read_bandwidth: %dGB/s, write_bandwidth: %dGB/s%s%s}",
		1+rng.IntN(100), 1+rng.IntN(100), 1+rng.IntN(100), latency, offload)
}

// catalogSection draws the catalog the case's model (and some of its
// hardware and links) come from: inline entries, or the test catalog file.
func (d *swarmDoc) catalogSection() {
	rng := d.rng
	switch d.catalog {
	case "":
		if d.hfConfig == "entry" {
			d.line("catalog: {models: [{name: llama-hf, config: %s}]}", d.path(swarmHFConfig))
		}
	case "file":
		d.line("catalog: {files: [%s]}", d.path("testdata/catalog/tiny.yaml"))
	case "inline":
		d.line("catalog:")
		d.line("  accelerators:")
		d.line("    - {name: swarm-gpu, kind: gpu, memory: %dGB, memory_bandwidth: %dTB/s, bf16: %dTFLOPS, fp8: %dTFLOPS,",
			16+rng.IntN(64), 1+rng.IntN(4), 100+rng.IntN(900), 200+rng.IntN(1800))
		d.line("       mfu: 0.5, mbu: 0.7, step_overhead: %dus, scale_up: swarm-link, scale_up_domain: 8, power_w: 300, cost_per_hour: %d}",
			rng.IntN(2000), 1+rng.IntN(4))
		d.line("  links:")
		d.line("    - {name: swarm-link, bandwidth: %dGB/s, latency: %dus}", 1+rng.IntN(400), rng.IntN(20))
		d.line("  models:")
		d.line("    - {name: swarm-llm, layers: %d, hidden: 1024, heads: 8, kv_heads: %d, intermediate: 4096,",
			2+rng.IntN(6), pickInt(rng, 2, 4, 8)) // at least the TP: a store's pools hold the same KV per block
		d.line("       vocab: 32000, params_total: %de6, max_context: 8192}", 50+rng.IntN(200))
	}
}

func pickInt(rng *rand.Rand, options ...int) int { return options[rng.IntN(len(options))] }

// metrics draws the lock-up threshold and abort, for some cases each.
func (d *swarmDoc) metrics() {
	rng := d.rng
	var parts []string
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("lockup_threshold: %dms", 1+rng.IntN(2000)))
	}
	parts = append(parts, fmt.Sprintf("lockup_abort: %dms", 1+rng.IntN(2000))) // deadlocks end in failures
	d.line("metrics: {%s}", strings.Join(parts, ", "))
}
