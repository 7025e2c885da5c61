// Package engine simulates one serving-engine instance with vLLM V1
// scheduling semantics: a running and a waiting queue, continuous batching
// under a token budget (max_num_batched_tokens) and a sequence cap
// (max_num_seqs), chunked prefill, running requests scheduled first, no
// admission in a step that preempted, and head-of-line blocking when the
// waiting head cannot get KV blocks. SGLang's and TensorRT-LLM's
// schedulers are other rules of the same instance (Rules, Kind).
//
// An Instance is a pure state machine. The simulator core drives it:
//
//	b := inst.Schedule(0)        // plan the next step; nil when idle
//	... price b with a perf.StepTimer, wait that long ...
//	res := inst.Complete(nowNs) // apply the step: tokens, first tokens, finishes
//
// The instance never schedules events and never reads a clock; it learns the
// time only to compute inter-token gaps. Roles (colocated, prefill, decode)
// differ only in how sequences enter and leave: a prefill-role sequence holds
// its blocks after finishing until the KV transfer releases it, and a
// decode-role sequence reserves blocks for a remote prompt, waits for the
// transfer, then resumes from the prompt's last token.
//
// A sequence decoding steadily cruises: the instance advances it without
// touching it until a step needs it (cruise.go). Fields of a running Seq
// are therefore current only in the sequences a StepResult hands out, or
// after a sequence finishes; Instance methods report instance-wide state
// exactly at all times.
//
// Reading guide:
//
//   - instance.go: the Instance, its queues and counters, and how sequences
//     enter and leave (Enqueue, KVArrived, KVLost, Release); seq.go, the
//     sequence and its states; queue.go, the queues; config.go, the
//     configuration.
//   - schedule.go: Schedule, vLLM V1's planning pass (running first, then
//     admission), and the prefix-cache lookups; complete.go: Complete,
//     applying a step; abort.go: Abort; crash.go: Drop and Fresh, what a
//     crashed or stopped instance loses.
//   - memory.go: the seam between scheduling and where KV lives, one small
//     interface (admit, reserve for remote KV, grow, release, preempt out,
//     swap in), with grow's fast path ahead of it; paged.go, its paged
//     pool; slots.go, its wafer slots. A new memory kind is a third
//     implementation, not a branch.
//   - tiers.go: the paged pool's lower tiers (host, disk, a shared
//     store): what is written to them when, the prefix hits found there
//     and copied up (onboarding, StepResult.Onboards), the swap space they
//     share, and what routers see of them; tiergroups.go, a hybrid
//     model's KV cache groups there, each block's group its own entry.
//   - policy.go: preemption (out to a tier, or recompute) and rejection.
//   - rules.go: the rules that differ between engine releases (admission,
//     the remote-KV queue, reservation for prefills in flight, deferred
//     frees and the fenced victim), one value the instance consults;
//     releases.go, a release as a preset of them, and the check of a rule
//     a release did not have; vllm.go, vLLM's releases, each rule with the
//     pull request that changed it. kinds.go, the engine kinds and the
//     presets of those other than vLLM: sglang.go, SGLang's admission by
//     its new-token ratio and its retraction; trtllm.go, TensorRT-LLM's
//     capacity scheduler. A next engine is another preset, and a rule it
//     needs joins Rules.
//   - deferred.go: frees held back for the step in flight, drained when
//     it has been processed; the fenced victim.
//   - sliding.go: hybrid models' sliding-window KV cache groups.
//   - pipeline.go: pipeline parallelism (Config.Stages > 1): up to that
//     many micro-batches in flight, a running sequence planned only for
//     the tokens it has beyond those in flight, the oldest completed
//     first.
//   - spec.go: speculative decoding — verify steps of 1 + k tokens, the
//     lookahead slots, the accepted drafts drawn per position.
//   - run.go: pure steady steps known in advance (RunSteps, RunBatch) and
//     taken in O(1) (AdvanceSteady), for a caller that runs them without
//     an event each.
//   - cruise.go: steady decoding without touching the sequence, its
//     block boundaries counted by phase; schedule.go's steady plans a
//     step whose sequences all cruise, none due but for its last token,
//     in O(1) whatever the number running.
//   - testdata/*.txt: behaviour scripts (script_test.go) pinning the
//     scheduling semantics step by step; go test -run TestScripts -rewrite
//     rewrites their output after a deliberate change.
package engine
