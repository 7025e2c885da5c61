// Package workload produces the requests a simulation replays: synthetic
// generators (renewal arrival processes with length distributions, and the
// inference-perf shared-prefix load) and streaming readers for production
// traces (Azure LLM inference 2023/2024, Mooncake, BurstGPT), for the
// files users bring (ShareGPT conversations with the scenario's arrivals,
// a CSV or JSONL log with a column mapping, OpenTelemetry spans exported as
// OTLP JSON), plus a generator driven by ServeGen's per-window
// distributions; and multi-turn sessions, generated or read from a session
// trace (CSV or JSONL), as sim.SessionSource.
//
// Every source implements sim.Source and guarantees: IDs are dense from 0 in
// arrival order (session sources leave them to the simulator, which alone
// knows when each turn arrives); ArrivalNs never decreases (a trace's first row arrives at 0);
// PromptTokens ≥ 1 and OutputTokens ≥ 1. Sources hold O(1) state (plus one
// row's worth of parsing buffers): a trace is never loaded whole.
//
// Randomness comes only from the *rand.Rand a constructor receives, so the
// same seed yields the same sequence. Trace readers report malformed input as
// a *ParseError naming the file, the 1-based line and the field.
//
// Reading guide: spec.go (the YAML-facing specs and their validation),
// length.go and arrival.go (the distributions), synthetic.go and
// sharedprefix.go (generators), trace.go (what the readers share), azure.go,
// mooncake.go, burstgpt.go (formats), sharegpt.go, mapped.go and
// mappedrows.go (the generic CSV and JSONL), otlp.go and otlpspan.go (the
// formats users bring; jsonstream.go streams the JSON documents of the
// first and the last), formats.go (the registry of trace formats: a new one
// is its reader's file and a line there; Trace.Validate and Trace.Open),
// servegen.go, sessions.go (generated sessions and the
// segment chain every session source builds), sessiontrace.go and
// sessionrows.go (the session trace), wrap.go (Scale, Limit).
package workload
