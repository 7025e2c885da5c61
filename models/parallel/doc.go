// Package parallel says how one serving instance spreads a model over its
// devices and what each device then holds.
//
// A Layout is the instance's degrees: tensor parallel (TP) inside each
// data-parallel rank, data-parallel attention ranks (DP), the expert
// parallelism of its MoE layers (EP) and pipeline stages (PP: a GPU
// pool's stages of TP devices each, or a wafer pool's wafers). Memory is what one device holds under a layout: its share of the
// weights, its KV bytes per token, its KV blocks. Wire is the KV a
// prefill-to-decode transfer moves into it.
//
// Scenarios size pools with it, step-time models read the degrees, the
// planner and the network count devices with it; none of them recompute
// a rank's share themselves.
//
// # Reading guide
//
//   - layout.go: Layout, its checks against a model (the rules vLLM
//     applies) and its devices.
//   - memory.go: Memory and Wire, a device's share of weights and KV.
//   - stages.go: how PP stages split the layers, as vLLM splits them.
package parallel
