package scenarios

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"handoff/models/engine"
	"handoff/models/llm"
)

// The swarm's pool draws: roles, hardware, parallelism, precision,
// engine limits (KV pools often small enough to preempt), preemption,
// step-time models, owners and claims, prefill handoff settings, and
// wafer pools; tiers, placement and autoscaling are in
// swarm_fleet_test.go.

// poolsSection draws one or two colocated pools, or one or two prefill pools and
// one or two decode pools (a wafer decoder for some); a split case one
// colocated pool of two to four instances.
func (d *swarmDoc) poolsSection() {
	rng := d.rng
	d.line("pools:")
	if d.topology {
		d.datacenter = [][]string{nil, {"east"}, {"east", "west"}}[rng.IntN(3)]
		d.domainSize = pickInt(rng, 4, 8, 8, 16, 72)
	}
	roles := []string{"colocated"}
	if d.pd {
		d.tag("pd")
		roles = []string{"prefill", "decode"}
	} else {
		d.tag("colocated")
	}
	for _, role := range roles {
		pools := 1 + rng.IntN(4)/3 // a second pool of the role for a quarter of the cases
		if d.split {
			pools = 1 // its instances hold the same context
		}
		for k := range pools {
			name := role + []string{"", "-b"}[k]
			if role == "decode" && d.waferFits() && rng.IntN(2) == 0 {
				d.waferPool(name)
			} else {
				d.gpuPool(name, role)
			}
		}
	}
}

// waferFits reports whether the model fits a wafer decoder the swarm
// draws: the dense and catalog models do.
func (d *swarmDoc) waferFits() bool { return !d.hybrid }

// modelParams are the served model's parameters: all but the routed
// experts, and the routed experts (gpt-oss-120b: 2.12e9 and 114.7e9, so
// that BF16 and MXFP4 make its catalog's 65.17 GB).
func (d *swarmDoc) modelParams() (shared, experts float64) {
	switch d.model {
	case "gpt-oss-120b":
		return 2.13e9, 114.7e9
	case "llama-3.1-8b":
		return 8.03e9, 0
	}
	return 0.3e9, 0 // the catalog models are smaller
}

// swarmDevices are the accelerators the swarm puts GPU pools on, with
// their memory (GB) and the compute formats they have tensor cores for.
var swarmDevices = map[string]struct {
	memGB   float64
	formats []string
}{
	"h100-sxm": {80, []string{"bf16", "fp8"}}, "h200": {141, []string{"bf16", "fp8"}},
	"a100-80gb": {80, []string{"bf16"}}, "b200": {180, []string{"bf16", "fp8", "fp4"}},
	"tiny-gpu": {24, []string{"bf16"}}, "swarm-gpu": {16, []string{"bf16", "fp8"}},
}

// hardware draws a GPU pool's accelerator: mostly an H100; a catalog
// case's own device for some.
func (d *swarmDoc) hardware() string {
	options := []string{"h100-sxm", "h100-sxm", "h100-sxm", "h200", "a100-80gb", "b200"}
	switch d.catalog {
	case "inline":
		options = append(options, "swarm-gpu", "swarm-gpu")
	case "file":
		options = append(options, "tiny-gpu", "tiny-gpu")
	}
	return pickOf(d.rng, options)
}

// gpuPool draws a GPU pool of a role.
func (d *swarmDoc) gpuPool(name, role string) {
	rng := d.rng
	p := swarmPool{name: name, role: role, count: 1 + rng.IntN(3), dp: 1, tp: pickInt(rng, 1, 1, 2), hardware: d.hardware()}
	if d.split {
		p.count++ // two instances or more: one does not split
	}
	p.min, p.max = p.count, p.count
	d.tiered, d.handoff = false, false
	d.line("  - name: %s", name)
	if role != "colocated" || rng.IntN(2) == 0 {
		d.line("    role: %s", role)
	}
	d.line("    count: %d", p.count)
	roofline := d.stepModel(&p) == defaultStepTime
	p.roofline = roofline
	if roofline && d.hybrid && rng.IntN(2) == 0 && !d.split { // a MoE: data-parallel ranks around one EP group
		d.tag("dp")
		p.dp = 2
	}
	precision, weights, experts := d.precision(&p)
	util := d.utilization(&p, weights, experts)
	d.line("    hardware: %s", p.hardware)
	d.line("    tp: %d", p.tp)
	d.pipeline(&p, roofline)
	if p.dp > 1 {
		d.line("    dp: %d", p.dp)
		d.line("    ep: %d", p.dp*p.tp)
		d.line("    dp_routing: %s", pickOf(rng, dpRoutings))
	}
	if precision != "" {
		d.line("    precision: {%s}", precision)
	}
	d.owner()
	if rng.IntN(4) == 0 && !d.split { // llm-d's context-length label (context_length_aware)
		lo := rng.IntN(2) * rng.IntN(4096)
		d.line("    context_length_range: [%d, %d]", lo, lo+1+rng.IntN(16384))
	}
	caching := rng.IntN(4) > 0
	d.engine(util, caching)
	host := caching && !d.split && (!d.hybrid || engine.CheckHybridTiers(d.release) == nil) && d.tiers(&p)
	d.preemption(&p, host)
	switch role {
	case "prefill":
		d.prefillHandoff(p.pp > 1)
	case "decode":
		d.decodeHandoff()
	}
	d.placement(&p)
	d.autoscale(&p)
	d.speculative(&p)
	d.pools = append(d.pools, p)
}

// pipeline draws, for a quarter of the roofline pools without
// data-parallel ranks, two pipeline stages, when the topology's domain
// holds the instance.
func (d *swarmDoc) pipeline(p *swarmPool, roofline bool) {
	if !roofline || p.dp > 1 || d.ppRng.IntN(4) > 0 || d.topology && 2*p.tp > d.domainSize ||
		d.spec != "" && d.spec != "none" { // no pipeline where the case drafts
		return
	}
	p.pp = 2
	d.tag("pp")
	d.line("    pp: %d", p.pp)
}

// stepModel draws a GPU pool's step-time model from the registry (all but
// the wafer's) and its section: the roofline's factor overrides, or a
// profile of a TP it holds.
func (d *swarmDoc) stepModel(p *swarmPool) string {
	rng := d.rng
	var models []string
	for _, name := range stepTimeNames() {
		if name != defaultWaferStepTime {
			models = append(models, name)
		}
	}
	model := pickOf(rng, append(models, defaultStepTime, defaultStepTime))
	switch model {
	case "polynomial":
		p.tp = pickInt(rng, 1, 2)
		d.line("    step_time: {model: polynomial, file: %s, profile_model: facebook/opt-13b}",
			d.path("profiles/distserve/profiler-a100-80g.distserve.json"))
	case "table":
		p.tp = 2
		d.line("    step_time: {model: table, file: %s, profile_model: llama2-70b, profile_hardware: %s}",
			d.path("profiles/splitwise/perf_model.csv"), pick(rng, "a100-80gb", "h100-80gb"))
	case defaultStepTime: // roofline: written out, or left to the default
		if parts := d.rooflineFactors(true); len(parts) > 0 || rng.IntN(3) == 0 {
			d.line("    step_time: {%s}", strings.Join(append([]string{"model: " + model}, parts...), ", "))
		}
	default:
		panic("swarm: no draw of step-time model " + model)
	}
	d.tag("step_" + model)
	return model
}

// rooflineFactors draws overrides of the roofline's factors, each for
// some pools (the expert imbalance only where there are experts).
func (d *swarmDoc) rooflineFactors(experts bool) []string {
	rng := d.rng
	var parts []string
	for _, f := range []string{"mfu", "decode_mfu", "mbu"} {
		if rng.IntN(4) == 0 {
			parts = append(parts, fmt.Sprintf("%s: %.2f", f, 0.05+0.9*rng.Float64()))
		}
	}
	if rng.IntN(4) == 0 {
		parts = append(parts, fmt.Sprintf("step_overhead: %dus", rng.IntN(3000)))
	}
	if experts && d.hybrid && rng.IntN(3) == 0 {
		parts = append(parts, fmt.Sprintf("expert_imbalance: %.2f", 1+2*rng.Float64()))
	}
	return parts
}

// swarmDTypes are the storage formats a precision may name.
func swarmDTypes() []string {
	return []string{string(llm.BF16), string(llm.FP16), string(llm.FP8), string(llm.MXFP4), string(llm.NVFP4)}
}

// precision draws, for a third of the pools, the formats the pool serves
// the model in — its weights', its experts' (a MoE's), the compute format
// (one the hardware has tensor cores for: fp4 puts the pool on a B200) —
// and the scenario's KV format. It returns the section's fields and the
// weights' and experts' bytes per parameter.
func (d *swarmDoc) precision(p *swarmPool) (section string, weights, experts float64) {
	rng := d.rng
	weights, experts = 2, 0.53125 // the catalog's: BF16, and gpt-oss-120b's MXFP4 experts
	var parts []string
	if d.kvDType != "" {
		parts = append(parts, "kv: "+d.kvDType)
	}
	if rng.IntN(3) == 0 {
		w := pickOf(rng, swarmDTypes())
		weights = llm.DType(w).Bytes()
		parts = append(parts, "weights: "+w)
	}
	if d.hybrid && rng.IntN(3) > 0 {
		e := pickOf(rng, swarmDTypes())
		experts = llm.DType(e).Bytes()
		parts = append(parts, "experts: "+e)
	}
	if rng.IntN(5) == 0 {
		compute := pickOf(rng, slices.Sorted(maps.Keys(formatBits)))
		if !slices.Contains(swarmDevices[p.hardware].formats, compute) {
			p.hardware = "b200"
		}
		p.pinned = true
		parts = append(parts, "compute: "+compute)
	}
	if len(parts) > 0 {
		d.tag("precision")
	}
	return strings.Join(parts, ", "), weights, experts
}

// utilization returns the memory utilization that leaves each device of
// the pool 0.1 to 4 GB of KV (often small enough to preempt) after its
// weights, at weights and experts bytes a parameter; a pool the device
// cannot hold moves to a B200, and doubles its TP if it must.
func (d *swarmDoc) utilization(p *swarmPool, weights, experts float64) float64 {
	shared, routed := d.modelParams()
	kvGB := []float64{0.1, 0.3, 1, 4}[d.rng.IntN(4)]
	for {
		perDevice := (shared*weights/float64(p.tp) + routed*experts/float64(p.tp*p.dp)) / 1e9
		need := 1.1*perDevice + 0.3 + kvGB
		if util := math.Ceil(need/swarmDevices[p.hardware].memGB*1000) / 1000; util <= 0.95 {
			return util
		}
		if p.hardware == "b200" {
			p.tp *= 2 // gpt-oss-120b's experts at BF16
		}
		p.hardware = "b200" // the largest the swarm draws
	}
}

// owner draws, for some pools, who answers for their time, and claims the
// transfer or the router for a pool's owner.
func (d *swarmDoc) owner() {
	rng := d.rng
	if rng.IntN(3) == 0 {
		d.line("    owner: vendor-%d", rng.IntN(2))
	}
	if d.claimed == nil {
		d.claimed = map[string]bool{}
	}
	var mine []string
	for _, c := range claims {
		if !d.claimed[c] && rng.IntN(3) == 0 {
			d.claimed[c] = true
			mine = append(mine, c)
		}
	}
	if len(mine) > 0 {
		d.line("    claims: [%s]", strings.Join(mine, ", "))
	}
}

// engine draws the engine limits at memory utilization util.
func (d *swarmDoc) engine(util float64, caching bool) {
	rng := d.rng
	budget := pickInt(rng, 256, 2048, 8192)
	parts := []string{fmt.Sprintf("max_num_batched_tokens: %d", budget), fmt.Sprintf("max_num_seqs: %d", 1+rng.IntN(64)),
		fmt.Sprintf("memory_utilization: %g", util), fmt.Sprintf("prefix_caching: %v", caching)}
	d.line("    engine: {%s}", strings.Join(append(parts, d.engineSwitches(budget)...), ", "))
}

// engineSwitches draws the rest of the engine: block size, queue order,
// the scheduling switches and a context limit (with chunked prefill off,
// no longer than the budget, as vLLM requires).
func (d *swarmDoc) engineSwitches(budget int) []string {
	rng := d.rng
	var parts []string
	if d.blockSize != defaultBlockSize || rng.IntN(3) == 0 {
		parts = append(parts, fmt.Sprintf("block_size: %d", d.blockSize))
	}
	parts = append(parts, d.engineKind()...)
	chunked := rng.IntN(4) > 0
	parts = append(parts, fmt.Sprintf("chunked_prefill: %v", chunked))
	switch {
	case !chunked:
		parts = append(parts, fmt.Sprintf("max_model_len: %d", min(budget, d.maxContext())))
	case rng.IntN(4) == 0:
		parts = append(parts, fmt.Sprintf("max_model_len: %d", min(pickInt(rng, 1024, 2048, 4096), d.maxContext())))
	}
	if rng.IntN(3) == 0 {
		names := engine.SchedulingPolicies()
		if d.kind == engine.KindTRTLLM.String() {
			names = names[:1] // fcfs: TensorRT-LLM serves in arrival order
		}
		parts = append(parts, "scheduling_policy: "+names[rng.IntN(len(names))])
	}
	return parts
}

// engineKind draws the pool's engine kind and its rules: vLLM (named or
// not) with a release and rules, or SGLang or TensorRT-LLM with an
// admission rule of theirs for some. A P/D pool of a hybrid model whose
// case lays KV out as vLLM's manager off beside the connector stays on
// vLLM (the other kinds keep their windows).
func (d *swarmDoc) engineKind() []string {
	rng := d.rng
	d.kind = pickOf(rng, engineKinds)
	if d.hybrid && d.pd && d.hybridKV == "false" || rng.IntN(2) == 0 {
		d.kind = engine.KindVLLM.String()
	}
	var parts []string
	if d.kind != engine.KindVLLM.String() || rng.IntN(4) == 0 {
		parts = append(parts, "kind: "+d.kind)
	}
	if d.kind == engine.KindVLLM.String() {
		var release []string
		d.release, release = swarmRelease(rng)
		return append(parts, d.sameKVLayout(release)...)
	}
	d.release = engine.Latest
	if d.hybrid && d.pd {
		d.hybridKV = "true"
	}
	admission := map[string][]string{"sglang": {"new_token_ratio"}, "trtllm": {"reserve_output", "first_chunk"}}[d.kind]
	if rng.IntN(2) == 0 {
		parts = append(parts, "admission: "+pickOf(rng, admission))
	}
	return parts
}

// hybridKVKey is the release rule that lays out a hybrid model's KV
// beside a connector.
const hybridKVKey = "hybrid_kv_with_connector"

// sameKVLayout returns a pool's drawn release parts with its KV layout
// made the case's: the P/D pools of a model with sliding-window layers
// must lay out their KV alike (checkKVLayouts). The first pool's layout —
// drawn, or its release's — is the case's; a later pool that differs sets
// it explicitly, and leaves a numbered release that did not have it for
// latest.
func (d *swarmDoc) sameKVLayout(parts []string) []string {
	if !d.hybrid || !d.pd {
		return parts
	}
	mine, i := "", slices.IndexFunc(parts, func(s string) bool { return strings.HasPrefix(s, hybridKVKey+": ") })
	if i >= 0 {
		mine = strings.TrimPrefix(parts[i], hybridKVKey+": ")
	} else {
		r, _ := engine.VLLM(d.release)
		mine = fmt.Sprint(r.HybridKV)
	}
	switch {
	case d.hybridKV == "":
		d.hybridKV = mine
		return parts
	case mine == d.hybridKV:
		return parts
	}
	parts = slices.DeleteFunc(parts, func(s string) bool { return strings.HasPrefix(s, hybridKVKey+": ") })
	if !d.allows("engine."+hybridKVKey, d.hybridKV) {
		d.release = engine.Latest
		parts = slices.DeleteFunc(parts, func(s string) bool { return strings.HasPrefix(s, "vllm: ") })
	}
	return append(parts, hybridKVKey+": "+d.hybridKV)
}

// allowed is the values of a release rule's field, of all, that the
// pool's release lets a file set.
func (d *swarmDoc) allowed(field string, all []string) []string {
	var out []string
	for _, v := range all {
		if d.allows(field, v) {
			out = append(out, v)
		}
	}
	return out
}

// allows reports whether the pool's release lets a file set the release
// rule field to value (latest lets any).
func (d *swarmDoc) allows(field, value string) bool {
	if d.release == engine.Latest || d.release == "" {
		return true
	}
	for _, r := range engine.VLLMRules() {
		if r.Field == field {
			return slices.Contains(r.Allowed(d.release), value)
		}
	}
	return true
}

// swarmReleases are the vLLM releases whose presets differ from the
// release before them, and latest: a release between two of them is the
// earlier one's preset.
func swarmReleases() []string {
	var out []string
	var last engine.Release
	for _, v := range engine.VLLMVersions() {
		r, err := engine.VLLM(v)
		if err != nil {
			panic(err)
		}
		if r.Version = ""; v == engine.Latest || r != last {
			out = append(out, v)
		}
		last = r
	}
	return out
}

// swarmRelease draws a pool's release and rules: a vLLM release with some
// of its rules set to values it allows, or none (latest) with any.
func swarmRelease(rng *rand.Rand) (string, []string) {
	version := engine.Latest
	var parts []string
	if rng.IntN(2) == 0 {
		version = pickOf(rng, swarmReleases())
		parts = append(parts, fmt.Sprintf("vllm: %q", version))
	}
	for _, r := range engine.VLLMRules() {
		field, ok := strings.CutPrefix(r.Field, "engine.")
		if !ok || version != engine.Latest && rng.IntN(2) == 0 {
			continue
		}
		allowed := r.Allowed(version)
		if version == engine.Latest { // any value: a what-if
			allowed = nil
			for _, st := range r.Steps {
				allowed = append(allowed, st.Allowed...)
			}
		}
		v := pickOf(rng, allowed)
		if v == "any" {
			v = fmt.Sprintf("%g", float64(1+rng.IntN(20))/100)
		}
		parts = append(parts, field+": "+v)
	}
	return version, parts
}

// maxContext is the served model's context length, or a bound below it.
func (d *swarmDoc) maxContext() int {
	if d.catalog != "" {
		return 4096 // tiny-llm's; swarm-llm's is 8192
	}
	return 131072
}

// preemption draws a GPU pool's preemption policy from those validation
// knows, with its section: swap space (none when the host tier is the
// swap space), or the reject policy's threshold and phase (decode only).
func (d *swarmDoc) preemption(p *swarmPool, host bool) {
	rng := d.rng
	policy := pickOf(rng, preemptions)
	if d.kind != engine.KindVLLM.String() {
		policy = "recompute" // the others' own ways: retraction, no eviction, pausing
	}
	switch {
	case policy == "swap" && p.dp == 1 && p.pp <= 1:
		d.tag("swap")
		d.line("    preemption: swap")
		if !host {
			bw := ""
			if rng.IntN(2) == 0 {
				bw = fmt.Sprintf(", host_bandwidth: %dGB/s", 1+rng.IntN(64))
			}
			d.line("    swap: {host_memory: %dMB%s}", 1+rng.IntN(2000), bw)
		}
	case policy == "reject" && p.role == "decode":
		d.tag("reject")
		d.line("    preemption: reject")
		phase := ""
		if rng.IntN(3) > 0 {
			phase = fmt.Sprintf(", phase: %d", 1+rng.IntN(2))
		}
		d.line("    reject: {cache_hit_threshold: %.2f%s}", rng.Float64(), phase)
	case rng.IntN(2) == 0:
		d.line("    preemption: recompute")
	}
}

// prefillHandoff draws a prefill pool's handoff: through the store when
// its tiers have one, else how it holds KV for its decoders — a timeout
// (in either spelling; 0: held until pulled), a lease, or a mode with its
// default — for some, and whether its decoders tell it of refusals; and,
// without lower tiers, streaming for some.
func (d *swarmDoc) prefillHandoff(piped bool) {
	rng := d.rng
	timeout, lease := d.allows("kv_hold", "timeout"), d.allows("kv_hold", "lease")
	switch k := rng.IntN(6); {
	case d.handoff:
		d.tag("store_handoff")
		d.line("    kv_handoff: store")
	case k == 0 && timeout:
		d.line("    kv_hold_timeout: %dms", rng.IntN(50))
	case k == 1 && timeout:
		d.line("    kv_hold: {mode: timeout, timeout: %dms}", rng.IntN(50))
	case k == 2 && lease:
		d.tag("lease")
		d.line("    kv_hold: {mode: lease, lease: %ds}", 1+rng.IntN(40))
	case k == 3:
		d.line("    kv_hold: {mode: %s}", pickOf(rng, d.allowed("kv_hold", holdModes)))
	case rng.IntN(2) == 0:
		d.line("    kv_handoff: direct")
	}
	if rng.IntN(2) == 0 {
		d.line("    notify_rejected: %s", pickOf(rng, d.allowed("notify_rejected", []string{"true", "false"})))
	}
	if !d.tiered && !piped { // a pipeline does not stream its KV
		d.line("    stream_kv: %v", rng.IntN(3) == 0)
	}
}

// decodeHandoff draws a GPU decode pool's kv_load_failure_policy for some,
// and llm-d's decode-first flow for some (the router then picks decoders
// on arrival).
func (d *swarmDoc) decodeHandoff() {
	rng := d.rng
	if rng.IntN(2) == 0 {
		d.line("    kv_load_failure_policy: %s", pickOf(rng, d.allowed("kv_load_failure_policy", loadFailures)))
	}
	if rng.IntN(3) == 0 {
		d.tag("decode_first")
		d.decodeFirst = true
		d.line("    decode_first: {cache_hit_threshold: %.2f}", rng.Float64())
	}
}

// waferPool draws a wafer decode pool: wafers, slots, a pressure policy
// from those validation knows (recompile with another layout, reject with
// a phase), the catalog figures overridden for some, and an autoscaler.
func (d *swarmDoc) waferPool(name string) {
	rng := d.rng
	d.tag("wafer")
	p := swarmPool{name: name, role: "decode", count: 1 + rng.IntN(2), dp: 1, tp: 1, wafer: true, hardware: "wse-3"}
	p.min, p.max = p.count, p.count
	policy := pickOf(rng, slices.Sorted(maps.Keys(pressurePolicies)))
	d.tag("pressure_" + policy)
	d.line("  - name: %s", name)
	d.line("    role: decode")
	d.line("    count: %d", p.count)
	d.line("    hardware: wse-3")
	if rng.IntN(3) == 0 {
		d.line("    preemption: %s", defaultWaferPreemption)
	}
	if d.kvDType != "" {
		d.line("    precision: {kv: %s}", d.kvDType) // the prefill pools' KV format
	}
	if parts := d.rooflineFactors(false); len(parts) > 0 || rng.IntN(3) == 0 {
		d.line("    step_time: {%s}", strings.Join(append([]string{"model: " + defaultWaferStepTime}, parts...), ", "))
	}
	d.line("    wafer:")
	d.line("      wafers: %d", 1+rng.IntN(2))
	d.line("      slots: [{count: %d, context: %d}]", 1+rng.IntN(8), 1024<<rng.IntN(3))
	d.line("      pressure_policy: %s", policy)
	switch policy {
	case "recompile":
		d.line("      layouts: [[{count: 1, context: %d}]]", min(16384, d.maxContext()))
		d.line("      recompile_time: %dms", 1+rng.IntN(100))
	case "reject":
		if rng.IntN(3) > 0 {
			d.line("      reject_phase: %d", 1+rng.IntN(2))
		}
	}
	d.waferOverrides()
	d.placement(&p)
	d.autoscale(&p)
	d.pools = append(d.pools, p)
}

// waferOverrides draws, each for some wafer pools, overrides of the
// catalog's wafer figures.
func (d *swarmDoc) waferOverrides() {
	rng := d.rng
	if rng.IntN(2) == 0 {
		d.line("      staging_rate: %dGB/s", rng.IntN(400))
	}
	if rng.IntN(2) == 0 {
		d.line("      layer_latency: %dus", 1+rng.IntN(20))
	}
	if rng.IntN(2) == 0 {
		d.line("      width_latency: %dns", 1+rng.IntN(2000))
	}
	if rng.IntN(2) == 0 {
		d.line("      prefill_efficiency: %.2f", 0.05+0.95*rng.Float64())
	}
}
