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
//     sequence; instance index for steps and kicks). Classes order
//     same-instant events: network completions,
//     step completions, hold timeouts, staging, recompiles, lock-up
//     watchdogs, arrivals, then deferred plans (kicks), so a plan sees
//     everything due at its instant. An event that no longer applies (a
//     replaced network prediction, a timeout for KV pulled meanwhile) is
//     superseded: it neither runs nor moves the clock.
//   - rng.go: Streams, one independent generator per named component.
//   - run.go: Run, the event loop and the cluster state; kick and plan start
//     an idle instance's next step and handle what planning did.
//   - steprun.go: runs, several pure steady steps of one instance in one
//     event, and sync/touch, which bring an instance in a run up to the
//     present before anything reads or changes it.
//   - pipeline.go: pipeline-parallel instances, their stages' clocks and
//     the micro-batches in flight, one step event at a time for the
//     oldest.
//   - records.go: the requests' records, kept or handed to a RecordSink
//     in ID order as they become final.
//   - split.go: a fleet whose instances never affect one another divided
//     into shards, each a run of its own over some of the instances:
//     the conditions (NewSplit), the routing of the workload in the order
//     requests reach the router (Add, Next), a shard's configuration
//     (Shard) and the merge of the shards' results (Merge). Package
//     sim/parallel runs the shards on cores of their own.
//   - replica.go: one instance's state in a run (engine, step in flight,
//     the router's bookkeeping of it, its derived figures).
//   - flight.go: a request's journey as explicit phases (routing, held,
//     prefilling, streaming, relaying to its decoder, holding its KV,
//     transferring, staging,
//     starting and decoding on its decoder, refused, done), entered only
//     through enter, which checks the move, charges the time spent in the
//     phase left to its attribution component and traces it;
//     flighttable.go keeps them, by ref, in chunks that never move.
//   - journey.go: the events that move a request along: arrival and
//     placement, prefill done and the handoff to a decoder; relay.go, a
//     P/D request's decode leg through the serving layer to its decoder
//     (the prefiller's response, a P/D proxy's calls, the decoder's own
//     front end); transfer.go,
//     the KV transfer and staging; hold.go: how a prefiller holds KV for
//     its decoder (vLLM's timeout, or its lease) and what a pull of
//     expired KV reads; strand.go: KV its decoder will never read,
//     held until its hold runs out; loadfail.go: a prefiller's crash
//     under a pull, and the decoder's kv_load_failure_policy;
//     decodefirst.go: llm-d's decode-first flow;
//     client.go: the client's timeouts, which abandon requests;
//     closedloop.go: a closed loop's users; sessions.go: multi-turn
//     sessions, each turn sent its think time after the previous one ends.
//   - tiers.go: the lower KV tiers' read links, onboards (copies up from
//     host, disk or the shared store) timed as transfers, the reads that
//     wait for a write to land, and the store handoff's path.
//   - finish.go: first tokens, completion, rejections and the router's
//     re-sending (RFC #24256 phases 1 and 2), drops, and requests that
//     fail wherever they are (endFlight).
//   - views.go, book.go, shared.go, holders.go: what routers see (stale
//     views refreshed every interval; bookkeeping brought up to date only
//     where it changed, and told to a router's indexes; which instances a
//     prompt's prefix may count on), their bookkeeping of routed work
//     (Dynamo's: uncached prefill tokens, full blocks, shared blocks once),
//     the decoder chosen after the prefill, requests they hold, and the
//     capacity checks that drop requests no instance can hold.
//   - fleet.go: fleets that change — each instance's life (off, requested,
//     ready, draining), billing, the router's view gaining and losing
//     instances; scaler.go: a pool's autoscaling loop around an
//     autoscale.Policy (scrapes as stale as configured, decisions every
//     interval); faults.go: crashes, links down or degraded, stragglers;
//     failover.go: the requests a crash hits, sent again as new attempts
//     that keep what the client has seen.
//   - metrics.go: per-instance preemption chains (cascades), progress and
//     the prefill share of busy time; lockup.go: lock-ups by kind
//     (deadlock, preemption loop, a prefiller pinned by KV its decoders do
//     not pull), each kind's rule, and the watchdog that bounds them all
//     alike; lockchain.go: the KV prefillers hold for each decoder, and
//     the waits-for chains between locked-up instances.
//   - trace.go, timeline.go: the request-journey Tracer hook and the
//     timelines sampled on a fixed grid of simulated time; package
//     sim/journey records the journeys and writes them for Perfetto.
//   - package sim/parallel runs a run's workload reader and its records'
//     consumers on goroutines of their own beside this loop (handoff run
//     --cores), which stays sequential.
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
// One event per engine step per instance — or per run of pure steady
// steps (steprun.go) — one per arrival and one per change in the network's
// next completion. A step costs O(sequences that
// need something in it): sequences decoding steadily cruise (see
// models/engine/cruise.go) and cost nothing until their last token, a
// preemption or a block the pool cannot give needs them (their block
// boundaries are counted by phase), and a step in which all of them cruise,
// none due but for its last token, costs O(1) before admission; a block a
// sequence holds only privately is anonymous in its pool
// (models/kv/freelist.go) and costs no access to block state.
// Per-request state lives only while the request is in flight. A finished request's results.Record is kept in Result.Records,
// or, with a Config.Records sink, handed to it as soon as every earlier
// request has ended too (records.go): the run then holds only the records
// from the oldest request in flight to the newest.
package sim
