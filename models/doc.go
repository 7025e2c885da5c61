// Package models is the root of handoff's component models. It holds no
// code; each subpackage is one model, a deterministic state machine that
// the core in package sim drives and that never schedules events, reads a
// clock, logs or touches files.
//
// # Reading guide
//
//   - llm: the served-model catalog and its derived figures (KV bytes per
//     token, weight bytes, FLOPs per token; for hybrid models with
//     sliding-window layers, vLLM's KV cache groups and what a sequence
//     holds), and the reader of Hugging Face config.json files that makes
//     a catalog entry of one (hfconfig.go, its parameter count in
//     hfparams.go).
//   - parallel: how an instance spreads a model over its devices (tp, dp,
//     ep, pp) and what each device holds: its weights, KV per token and
//     blocks, and the KV a transfer moves into it.
//   - kv: the paged KV block pool with a chained-hash prefix cache, an LRU
//     free queue (a ring of block IDs) and request-private blocks.
//   - engine: one serving instance with vLLM V1 scheduling (running first,
//     chunked prefill, head-of-line admission), recompute/swap/reject
//     preemption, prefill and decode roles, time accounting, the
//     sliding-window groups of hybrid models, the micro-batches a
//     pipeline-parallel instance keeps in flight, and the slot mode of
//     wafer-scale decoders.
//   - perf: step-time models (roofline — with MoE layers as the kernel
//     vLLM dispatches runs them, expert-parallel groups and per-part
//     precision — DistServe polynomial, Splitwise profile table, wafer
//     pipeline, and a GPU pipeline's stages and the hops between them).
//   - draft: the speculative-decoding drafters (MTP, EAGLE, EAGLE-3,
//     n-gram, a draft model): what each allows, the lookahead vLLM
//     reserves for it and the network its passes run; one file each and a
//     line in scenarios/speculative.go.
//   - network: links shared max-min fairly, flat and hierarchical
//     topologies, placement, transfer predictions.
//   - router: round robin, least loaded, Dynamo's KV router, llm-d's
//     scorers and the topology-aware cost; a policy that can keeps indexes
//     over its views (Indexer, tree.go) so that a choice does not scan the
//     fleet, its scan kept as the reference. A policy's configuration type is
//     its scenario section (YAML fields, a Default value, Check), so a new
//     policy is a file there plus a line in scenarios/router.go.
//   - autoscale: the policies that size a pool while a run goes on — a
//     Kubernetes-HPA-style threshold scaler and a Dynamo-style SLA planner
//     — behind one Observation → desired-count interface the core's
//     scaler (sim/scaler.go) calls every adjustment interval.
//
// Two packages under models are not models but the ground every layer
// stands on, and import nothing of handoff:
//
//   - units: the quantities the models compute in (bytes, bandwidth,
//     durations, rates, FLOPS) and their text forms in input files.
//   - strictyaml: the strict YAML decoding every input file shares
//     (scenarios, the hardware and model catalogs), whose errors name the
//     file, the line and the field.
package models
