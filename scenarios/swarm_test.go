package scenarios

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim"
)

var (
	swarmSeed  = flag.Uint64("swarm.seed", 1, "first seed of the scenario swarm")
	swarmCases = flag.Int("swarm.cases", 120, "scenarios the scenario swarm draws")
)

// TestScenarioSwarm draws scenario files from seeds and takes each through
// the whole path a user's file takes: Load (strict decoding, defaults,
// validation), Build (catalogs, memory sizing, routers, workload sources)
// and sim.Run, twice, and once more from the effective scenario a run
// writes out. It checks that every draw loads, that runs of the same file
// agree exactly, that the effective scenario reproduces the run, and that
// every request ended once with a status. Draws cover every role, router,
// preemption and pressure policy, wafer pools, topologies, stale views and
// every workload source. Reproduce a failure with
// -swarm.seed=S -swarm.cases=1 (the failing file is printed).
func TestScenarioSwarm(t *testing.T) {
	seen := map[string]int{}
	for k := range uint64(*swarmCases) {
		seed := *swarmSeed + k
		doc, tags := swarmScenario(rand.New(rand.NewPCG(seed, 0x5ce9)))
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { swarmScenarioOne(t, doc) }) {
			t.Logf("seed %d:\n%s", seed, doc)
		}
		for _, tag := range tags {
			seen[tag]++
		}
	}
	if *swarmCases >= 100 {
		for _, want := range swarmTags {
			if seen[want] == 0 {
				t.Errorf("the swarm never drew %s: %v", want, seen)
			}
		}
	}
}

// swarmTags are what the swarm must draw at least once in 100 cases.
var swarmTags = []string{"pd", "colocated", "wafer", "hybrid", "topology", "stale", "trace", "shared_prefix",
	"servegen", "swap", "reject", "recompile", "round_robin", "least_loaded", "dynamo", "llmd",
	"topology_aware", "dp", "sessions", "tiers"}

func swarmScenarioOne(t *testing.T, doc string) {
	l, err := Parse([]byte(doc), "swarm.yaml")
	if err != nil {
		t.Fatalf("the swarm drew a file that does not load: %v", err)
	}
	a := swarmRun(t, l)
	if b := swarmRun(t, l); !sameRun(a, b) {
		t.Fatal("two runs of the same scenario differ")
	}
	eff, err := l.Effective(l.Dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(eff, "effective.yaml")
	if err != nil {
		t.Fatalf("the effective scenario does not load: %v\n%s", err, eff)
	}
	if c := swarmRun(t, back); !sameRun(a, c) {
		t.Fatalf("the effective scenario runs differently:\n%s", eff)
	}
	for i := range a.Records {
		r := &a.Records[i]
		if r.ID != int64(i) || r.FinishNs < r.ArrivalNs || r.Status != results.Completed && r.Reason == "" {
			t.Fatalf("request %d ended inconsistently: %+v", i, *r)
		}
	}
}

// swarmRun builds and runs a loaded scenario.
func swarmRun(t *testing.T, l *Loaded) *sim.Result {
	t.Helper()
	b, err := l.Build()
	if err != nil {
		t.Fatalf("the swarm drew a file that does not build: %v", err)
	}
	defer b.Close()
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sameRun(a, b *sim.Result) bool {
	return a.Events == b.Events && a.SimTimeNs == b.SimTimeNs && reflect.DeepEqual(a.Records, b.Records) &&
		reflect.DeepEqual(a.Instances, b.Instances)
}

// swarmScenario draws a scenario file and the tags of what it exercises.
// Every draw is meant to load and build: sizes are chosen to fit.
func swarmScenario(rng *rand.Rand) (string, []string) {
	d := &swarmDoc{rng: rng, hybrid: rng.IntN(4) == 0}
	d.line("name: swarm")
	d.line("seed: %d", 1+rng.IntN(1000))
	if d.hybrid {
		d.tag("hybrid")
		d.line("model: gpt-oss-120b") // sliding-window layers
	} else {
		d.line("model: llama-3.1-8b")
	}
	d.line("slo: {ttft: %dms, tpot: %dms}", 50+rng.IntN(2000), 5+rng.IntN(100))
	d.workload()
	pd := rng.IntN(2) == 0
	topology := pd && rng.IntN(3) == 0
	d.line("pools:")
	if pd {
		d.tag("pd")
		d.gpuPool("prefill", "prefill", topology)
		if !d.hybrid && rng.IntN(3) == 0 {
			d.waferPool()
		} else {
			d.gpuPool("decode", "decode", topology)
		}
	} else {
		d.tag("colocated")
		d.gpuPool("colocated", "colocated", false)
	}
	if topology {
		d.tag("topology")
		d.line("topology: {datacenters: [east, west], domain_size: 8, datacenter_link: %s}", pick(rng, "tcp-100g", "efa"))
	} else {
		d.line("link: {kind: %s}", pick(rng, "nvlink4", "ib-ndr", "tcp-100g", "efa"))
	}
	d.router(pd)
	d.line("metrics: {lockup_abort: %dms}", 1+rng.IntN(2000))
	if d.store {
		d.line("kv_store: {capacity: %dGB, read_bandwidth: %dGB/s, write_bandwidth: %dGB/s, latency: %dus, offload: %s}",
			1+rng.IntN(100), 1+rng.IntN(100), 1+rng.IntN(100), rng.IntN(100), pick(rng, "completion", "eviction", "both"))
	}
	return d.b.String(), d.tags
}

// swarmDoc accumulates a drawn scenario file.
type swarmDoc struct {
	rng    *rand.Rand
	b      strings.Builder
	tags   []string
	hybrid bool // gpt-oss-120b, whose weights need most of an H100

	tiered, handoff bool // the pool being drawn has lower tiers, and hands off through the store
	store           bool // a pool reads the shared store: the scenario defines it
}

func (d *swarmDoc) line(format string, args ...any) {
	fmt.Fprintf(&d.b, format+"\n", args...)
}

func (d *swarmDoc) tag(t string) { d.tags = append(d.tags, t) }

func pick(rng *rand.Rand, options ...string) string { return options[rng.IntN(len(options))] }

// workload draws one of the request sources, 20 to 60 requests long.
func (d *swarmDoc) workload() {
	rng := d.rng
	n := 20 + rng.IntN(40)
	d.line("workload:")
	switch rng.IntN(6) {
	case 5:
		d.tag("sessions") // multi-turn: each turn's history, answers included, a prefix hit
		d.line("  sessions:")
		d.line("    sessions: %d", 1+n/4)
		d.line("    arrival: {process: poisson, rate: %d/s}", 1+rng.IntN(100))
		d.line("    turns: {dist: uniform, min: 1, max: %d}", 1+rng.IntN(6))
		d.line("    input_tokens: {dist: lognormal, mean: %d, stddev: %d, max: 2000}", 5+rng.IntN(300), 1+rng.IntN(200))
		d.line("    output_tokens: {dist: uniform, min: 1, max: %d}", 1+rng.IntN(400))
		d.line("    think_ms: {dist: uniform, min: 1, max: %d}", 1+rng.IntN(2000))
		d.line("    system_prompt_tokens: %d", rng.IntN(500))
	case 0:
		d.tag("trace")
		d.line("  trace: {format: mooncake, path: traces/mooncake-conversation.jsonl, limit: %d}", n)
		d.line("  rate_scale: %d", 1+rng.IntN(100))
	case 1:
		d.tag("trace")
		d.line("  trace: {format: azure, path: traces/azure-conv.csv, limit: %d}", n)
		d.line("  rate_scale: %d", 1+rng.IntN(20))
	case 2:
		d.tag("shared_prefix")
		d.line("  shared_prefix: {num_unique_system_prompts: %d, num_users_per_system_prompt: %d, system_prompt_len: %d,",
			1+rng.IntN(4), 1+rng.IntN(4), 16+rng.IntN(600))
		d.line("    question_len: %d, output_len: %d, stages: [{duration: 1s, rate: %d/s}]}", 1+rng.IntN(300), 1+rng.IntN(300), n)
	case 3:
		d.tag("servegen")
		d.line("  servegen: {path: traces/servegen-r1/chunk-0, limit: %d}", n)
		d.line("  rate_scale: %d", 1+rng.IntN(200))
	default:
		d.line("  synthetic:")
		d.line("    requests: %d", n)
		if process := pick(rng, "poisson", "gamma", "constant"); process == "gamma" {
			d.line("    arrival: {process: gamma, rate: %d/s, cv: %.1f}", 1+rng.IntN(400), 0.2+3*rng.Float64())
		} else {
			d.line("    arrival: {process: %s, rate: %d/s}", process, 1+rng.IntN(400))
		}
		d.line("    input_tokens: {dist: lognormal, mean: %d, stddev: %d, max: 6000}", 10+rng.IntN(2000), 1+rng.IntN(1000))
		d.line("    output_tokens: {dist: uniform, min: 1, max: %d}", 1+rng.IntN(1500))
	}
}

// gpuPool draws a GPU pool of a role: count, hardware, engine limits (KV
// pools often small enough to preempt), a preemption policy and, for
// prefill pools, KV hold and streaming.
func (d *swarmDoc) gpuPool(name, role string, topology bool) {
	rng := d.rng
	d.line("  - name: %s", name)
	d.line("    role: %s", role)
	d.line("    count: %d", 1+rng.IntN(3))
	d.line("    hardware: h100-sxm")
	tp := pick(rng, "1", "1", "2")
	d.line("    tp: %s", tp)
	// At TP 1, utilization 0.205 leaves ~0.3 GB for KV (about 2,400 tokens
	// of Llama-3.1-8B); 0.84 leaves ~1.8 GB for gpt-oss-120b's.
	util := pick(rng, "0.205", "0.21", "0.25", "0.9")
	if d.hybrid {
		util = pick(rng, "0.84", "0.86", "0.9")
	}
	caching := rng.IntN(2) == 0
	d.line("    engine: {max_num_batched_tokens: %s, max_num_seqs: %d, memory_utilization: %s, prefix_caching: %v, chunked_prefill: true, remote_kv_queue: %s, async_scheduling: %v}",
		pick(rng, "256", "2048", "8192"), 1+rng.IntN(64), util, caching,
		pick(rng, "separate", "separate", "shared"), rng.IntN(2) == 0)
	k := rng.IntN(3)
	host := caching && !d.hybrid && d.tiers(role)
	switch {
	case k == 1:
		d.tag("swap")
		d.line("    preemption: swap")
		if !host { // else the host tier is the swap space
			d.line("    swap: {host_memory: %dMB}", 1+rng.IntN(2000))
		}
	case k == 2 && role == "decode":
		d.tag("reject")
		d.line("    preemption: reject")
		d.line("    reject: {cache_hit_threshold: %.2f, phase: %d}", rng.Float64(), 1+rng.IntN(2))
	}
	if d.hybrid && k != 1 && rng.IntN(2) == 0 { // gpt-oss-120b is a MoE: data-parallel ranks around one EP group
		d.tag("dp")
		ep := 2
		if tp == "2" {
			ep = 4
		}
		d.line("    dp: 2")
		d.line("    ep: %d", ep)
		d.line("    dp_routing: %s", pick(rng, "balancer", "router"))
	}
	if role == "prefill" {
		switch {
		case d.handoff:
			d.line("    kv_handoff: store")
		case rng.IntN(3) == 0:
			d.line("    kv_hold_timeout: %dms", 1+rng.IntN(50))
		}
		d.line("    stream_kv: %v", !d.tiered && rng.IntN(3) == 0)
	}
	if topology {
		d.line("    placement: {datacenter: %s, rule: %s}", pick(rng, "east", "west"), pick(rng, "pack", "spread"))
	}
}

// tiers draws, for a third of the GPU pools, lower KV tiers: a host tier
// (reported true), a disk, the shared store, each written on completion,
// on eviction or both; a prefill pool with the store may hand off
// through it.
func (d *swarmDoc) tiers(role string) (host bool) {
	rng := d.rng
	d.tiered, d.handoff = false, false
	if rng.IntN(3) != 0 {
		return false
	}
	d.tag("tiers")
	d.tiered = true
	offload := func() string { return pick(rng, "completion", "eviction", "both") }
	d.line("    kv_tiers:")
	if host = rng.IntN(3) > 0; host {
		d.line("      - {tier: host, capacity: %dMB, offload: %s}", 10+rng.IntN(2000), offload())
	}
	if rng.IntN(3) == 0 {
		d.line("      - {tier: disk, capacity: %dMB, read_bandwidth: %dGB/s, write_bandwidth: %dGB/s, latency: %dus, offload: %s}",
			10+rng.IntN(4000), 1+rng.IntN(10), 1+rng.IntN(5), rng.IntN(200), offload())
	}
	if !host || rng.IntN(2) == 0 {
		d.store = true
		d.line("      - {tier: store}")
		d.handoff = role == "prefill" && rng.IntN(2) == 0
	}
	return host
}

// waferPool draws a wafer decode pool: slots, a pressure policy, and for
// recompile a second layout.
func (d *swarmDoc) waferPool() {
	rng := d.rng
	d.tag("wafer")
	policy := pick(rng, "queue", "reject", "recompile")
	if policy != "queue" {
		d.tag(policy)
	}
	d.line("  - name: decode")
	d.line("    role: decode")
	d.line("    count: %d", 1+rng.IntN(2))
	d.line("    hardware: wse-3")
	d.line("    wafer:")
	d.line("      wafers: 1")
	d.line("      slots: [{count: %d, context: %d}]", 1+rng.IntN(8), 1024<<rng.IntN(3))
	d.line("      pressure_policy: %s", policy)
	switch policy {
	case "recompile":
		d.line("      layouts: [[{count: 1, context: 16384}]]")
		d.line("      recompile_time: %dms", 1+rng.IntN(100))
	case "reject":
		d.line("      reject_phase: %d", 1+rng.IntN(2))
	}
}

// router draws a routing policy, its section's knobs and a refresh
// interval.
func (d *swarmDoc) router(pd bool) {
	rng := d.rng
	policy := pick(rng, "round_robin", "least_loaded", "dynamo", "llmd", "topology_aware")
	d.tag(policy)
	d.line("router:")
	d.line("  policy: %s", policy)
	if rng.IntN(3) == 0 {
		d.tag("stale")
		d.line("  refresh_interval: %dms", 1+rng.IntN(200))
	}
	switch policy {
	case "dynamo", "topology_aware":
		d.line("  dynamo: {overlap_score_credit: %d, prefill_load_scale: %d, temperature: %s, router_queue_threshold: %s,",
			rng.IntN(3), 1+rng.IntN(3), pick(rng, "0", "0", "0.5"), pick(rng, "0", "0", "1.5", "4"))
		d.line("    use_kv_events: %v, conditional_disagg: %v, conditional_disagg_policy: %s, assume_kv_reuse: %v}",
			rng.IntN(3) > 0, pd && policy == "dynamo" && rng.IntN(2) == 0, pick(rng, "isl_bounding", "token_cap"), rng.IntN(2) == 0)
		if policy == "topology_aware" {
			d.line("  topology_aware: {blocks_per_ms: %d}", rng.IntN(4))
		}
	case "llmd":
		d.line("  llmd: {picker: %s, non_cached_tokens: %s, scorers: [{name: queue, weight: %d}, {name: prefix-cache, weight: %d}, {name: %s, weight: 1}]}",
			pick(rng, "max-score", "weighted-random"), pick(rng, "0", "0", "64", "1024"), rng.IntN(3), rng.IntN(4),
			pick(rng, "kv-cache-utilization", "load-aware", "active-request"))
	}
}
