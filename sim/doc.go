// Package sim is handoff's event-driven core: a clock in integer
// nanoseconds, one event queue, named random streams from one seed, and the
// orchestration that moves each request through router → prefill instance →
// KV transfer → decode instance and records how it ended.
//
// # Reading guide
//
//   - request.go: Request and Source, what a workload yields.
//   - config.go: Config and Instance, what a run needs (built by package
//     scenarios from a scenario file).
//   - queue.go: the event queue, a 4-ary heap ordered by (time, class,
//     sequence). Classes order same-instant events: network completions,
//     then step completions, then arrivals.
//   - rng.go: Streams, one independent generator per named component.
//   - run.go: Run, the event loop and the cluster state; kick starts an
//     idle instance's next step.
//   - journey.go: a request's life: arrival and placement, the handoff from
//     prefill to decode, the transfer, completion, drops.
//   - views.go: what routers see, and the capacity checks that drop
//     requests no instance can hold.
//
// The models the core drives live in package models: engine (the vLLM V1
// scheduler and its paged KV pool), perf (step times), network (links and
// transfers), router (placement). They are pure state machines: they never
// schedule events, read a clock, log, or touch files; the core asks them
// what happens next and schedules it. Everything here is single-threaded
// and deterministic: the same Config gives the same Result, bit for bit.
//
// # Cost
//
// One event per engine step per instance, one per arrival and one per
// change in the network's next completion. A step costs O(sequences in
// it); per-request state lives only while the request is in flight, and
// each finished request keeps one results.Record.
package sim
