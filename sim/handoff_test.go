package sim

import (
	"slices"
	"strings"
	"testing"

	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/results"
)

// The prefill side of the handoff, in closed form (the timer and link of
// closedform_test.go). In blockedConfig the decoder (8 blocks of 16
// tokens) is full with A while B waits for blocks:
//
//	A  arrives 0, prompt 100, 20 tokens: prefill 0–2000; pull 2000–40 334
//	   (5000 + ⌈100 000/3⌉); first token 41 344; 19 more steps of 1010:
//	   done at 60 534, its 8 blocks freed
//	B  arrives 1000, prompt 100, 3 tokens: prefill 2000–4000 (after A's);
//	   waits on the decoder for 7 blocks until 60 534; then its pull takes
//	   38 334 ns and its first step 1010: first token at 99 878
const (
	blockedAEndNs     = 60_534
	blockedBPrefillNs = 4_000
	blockedPullNs     = 38_334
	blockedBFirstNs   = blockedAEndNs + blockedPullNs + cfDecodeNs
)

func blockedConfig(t *testing.T) *Config {
	reqs := []Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 20},
		{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 3}}
	cfg := pdConfig(t, reqs)
	cfg.Instances[1].Engine = engineCfg(t, 8, 4096, 8, true)
	return cfg
}

// blockWatch records when an instance's used KV blocks change: each hook
// call sees the state the previous event left.
type blockWatch struct {
	inst   int
	prevNs int64
	used   int
	at     []int64 // when the count changed
	counts []int   // to what
}

func (w *blockWatch) hook(c *cluster, atNs int64) {
	if u := c.replicas[w.inst].eng.Pool().UsedBlocks(); u != w.used {
		w.used = u
		w.at, w.counts = append(w.at, w.prevNs), append(w.counts, u)
	}
	w.prevNs = atNs
}

// freedAt is when the count fell to want after rising above it.
func (w *blockWatch) freedAt(want int) int64 {
	for k := 1; k < len(w.counts); k++ {
		if w.counts[k] == want && w.counts[k-1] > want {
			return w.at[k]
		}
	}
	return -1
}

// runBlocked drives cfg watching the prefiller's blocks and returns A's
// and B's records.
func runBlocked(t *testing.T, cfg *Config) (a, b results.Record, w *blockWatch) {
	t.Helper()
	w = &blockWatch{inst: 0}
	c, err := drive(t, cfg, 1, w.hook)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, 2)
	checkDrained(t, c)
	for _, r := range c.recs.all {
		checkAttribution(t, &r)
	}
	a, b = c.recs.all[0], c.recs.all[1]
	if a.Status != results.Completed || a.FinishNs != blockedAEndNs {
		t.Errorf("A %+v, want completed at %d ns", a, blockedAEndNs)
	}
	return a, b, w
}

// TestTimeoutFreesKVAndLatePullReadsIt: under a 10 µs timeout the
// prefiller frees each prompt's 7 blocks 10 000 ns after its prefill
// ended, pulled or not: A's at 12 000, while its pull (2000–40 334) still
// reads them, B's at 14 000, while B still waits on the decoder. Neither
// decoder read notices: A's pull ends as it would, and at 60 534 B's
// starts, with its normal timing, and serves B from the freed blocks —
// two expired-KV reads, counted. (Before, the decoder recomputed B's
// prompt, and A's KV stayed until its pull ended.)
func TestTimeoutFreesKVAndLatePullReadsIt(t *testing.T) {
	cfg := blockedConfig(t)
	cfg.Instances[0].KVHold = KVHold{TimeoutNs: 10_000}
	a, r, w := runBlocked(t, cfg)
	if want := []int64{0, 2000, 12_000, blockedBPrefillNs + 10_000}; !slices.Equal(w.at, want) ||
		!slices.Equal(w.counts, []int{7, 14, 7, 0}) {
		t.Errorf("prefiller's blocks changed to %v at %v ns, want 7, 14, 7, 0 at %v", w.counts, w.at, want)
	}
	if r.ExpiredKVReads != 1 || r.Time[results.TTransfer] != blockedPullNs || r.FirstTokenNs != blockedBFirstNs {
		t.Errorf("B %+v: want 1 expired read, a %d ns pull, first token at %d", r, blockedPullNs, blockedBFirstNs)
	}
	if a.ExpiredKVReads != 1 {
		t.Errorf("A %+v: want 1 expired read", a)
	}
}

// TestLeaseHoldsKVWhileDecoderQueues: under vLLM's lease (30 µs here, a
// heartbeat every 5, each holding 20 past it) the decoder heartbeats for
// B the whole 56 µs it queues it, so the prefiller keeps B's KV until the
// pull ends (98 868 ns) and the pull reads it whole.
func TestLeaseHoldsKVWhileDecoderQueues(t *testing.T) {
	cfg := blockedConfig(t)
	cfg.Instances[0].KVHold = KVHold{Lease: true, LeaseNs: 30_000, HeartbeatNs: 5_000, ExtendNs: 20_000}
	_, r, w := runBlocked(t, cfg)
	if at := w.freedAt(0); at != blockedAEndNs+blockedPullNs {
		t.Errorf("prefiller freed B's KV at %d ns (changes %v at %v), want at its pull's end %d", at, w.counts, w.at,
			blockedAEndNs+blockedPullNs)
	}
	if r.ExpiredKVReads != 0 || r.FirstTokenNs != blockedBFirstNs {
		t.Errorf("B %+v: want no expired read, first token at %d", r, blockedBFirstNs)
	}
}

// TestLeaseFreesKVAfterDecoderCrash: the decoder crashes at 52 000 ns with
// B queued. Its last heartbeat was at 50 000 (its grid of 5 µs), which
// held B's KV to 70 000 — past the first lease (4000 + 30 000): the
// prefiller frees the stranded KV then, while B, failed over, is
// prefilled again beside it. Heartbeating at every step, the decoder held
// it to 52 000 + 20 000; under a longer first lease, that lease ends last.
// Under a timeout of 480 µs it stays until 484 000; under a timeout of 0,
// until the run ends.
func TestLeaseFreesKVAfterDecoderCrash(t *testing.T) {
	for _, tc := range []struct {
		hold   KVHold
		freeNs int64
	}{
		{KVHold{Lease: true, LeaseNs: 30_000, HeartbeatNs: 5_000, ExtendNs: 20_000}, 70_000},
		{KVHold{Lease: true, LeaseNs: 30_000, HeartbeatNs: 0, ExtendNs: 20_000}, 72_000},      // every step: at the crash
		{KVHold{Lease: true, LeaseNs: 80_000, HeartbeatNs: 10_000, ExtendNs: 20_000}, 84_000}, // the first lease
		{KVHold{TimeoutNs: 480_000}, 484_000},
		{KVHold{}, never},
	} {
		cfg := blockedConfig(t)
		cfg.Instances[0].KVHold = tc.hold
		cfg.Faults = []Fault{{Kind: FaultCrash, Instance: 1, AtNs: 52_000}}
		cfg.Source = &sliceSource{reqs: append(cfg.Source.(*sliceSource).reqs,
			Request{ArrivalNs: 600_000, PromptTokens: 10, OutputTokens: 1})} // the run goes past every expiry
		var dueNs, goneNs, prevNs int64 = -1, never, 0 // gone: not before the run's end
		c, err := drive(t, cfg, 1, func(c *cluster, atNs int64) {
			switch q := c.replicas[0].hold.stranded.q; {
			case len(q) == 1:
				dueNs = q[0].atNs
			case dueNs >= 0 && goneNs == never:
				goneNs = prevNs
			}
			prevNs = atNs
		})
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, c.recs.all, 3)
		if dueNs != tc.freeNs || goneNs != tc.freeNs {
			t.Errorf("%+v: stranded KV due at %d ns, freed at %d; want %d", tc.hold, dueNs, goneNs, tc.freeNs)
		}
		if r := c.recs.all[1]; r.Status != results.Completed || r.Failovers != 1 {
			t.Errorf("%+v: B %+v, want completed after one fail-over", tc.hold, r)
		}
	}
}

// strandConfig is TestLateDecoderTooSmallDrops's cluster: a router that
// picks the decoder after the prefill picks decode-0, too small for the
// request, while decode-1 could hold it.
func strandConfig(t *testing.T, hold KVHold, strand bool, reqs []Request) *Config {
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 4096, 8, false), timer),
		instances(RoleDecode, 1, engineCfg(t, 10, 4096, 8, false), timer)...)
	insts = append(insts, instances(RoleDecode, 1, engineCfg(t, 100, 4096, 8, false), timer)...)
	insts[2].Name = "decode-1"
	insts[0].KVHold, insts[0].StrandRejected = hold, strand
	return withNICs(&Config{Name: "strand", Instances: insts, Router: laterRouter{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
}

// TestStrandedRejectionKeepsKV: a router that picks the decoder after the
// prefill picks one too small for the request (prefill 0–2000 ns); it is
// dropped then. A prefiller whose decoders tell it frees the KV at once;
// one they do not (vLLM before 0.21) keeps it until its timeout (2000 +
// 50 000) or its first lease (2000 + 30 000): no decoder ever heartbeated.
func TestStrandedRejectionKeepsKV(t *testing.T) {
	for _, tc := range []struct {
		strand bool
		hold   KVHold
		freeNs int64
	}{
		{false, KVHold{TimeoutNs: 50_000}, 2000},
		{true, KVHold{TimeoutNs: 50_000}, 52_000},
		{true, KVHold{Lease: true, LeaseNs: 30_000, HeartbeatNs: 5_000, ExtendNs: 20_000}, 32_000},
	} {
		reqs := []Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 100},
			{ArrivalNs: 200_000, PromptTokens: 10, OutputTokens: 1}} // keeps the run going
		cfg := strandConfig(t, tc.hold, tc.strand, reqs)
		w := &blockWatch{inst: 0}
		c, err := drive(t, cfg, 1, w.hook)
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, c.recs.all, 2)
		if r := c.recs.all[0]; r.Status != results.Dropped || r.FinishNs != 2000 || !strings.Contains(r.Reason, "too long for decode-0") {
			t.Errorf("strand %v: %+v, want dropped at 2000 ns", tc.strand, r)
		}
		if at := w.freedAt(0); at != tc.freeNs {
			t.Errorf("strand %v %+v: KV freed at %d ns (changes %v at %v), want %d", tc.strand, tc.hold, at,
				w.counts, w.at, tc.freeNs)
		}
	}
}

// TestStrandedKVDoesNotKeepTheRunGoing: a lone request dropped as in
// TestStrandedRejectionKeepsKV leaves its KV stranded until 52 000 ns, but
// the run ends with the request, at 2000 ns.
func TestStrandedKVDoesNotKeepTheRunGoing(t *testing.T) {
	cfg := strandConfig(t, KVHold{TimeoutNs: 50_000}, true, []Request{{PromptTokens: 100, OutputTokens: 100}})
	if res := mustRun(t, cfg); res.SimTimeNs != 2000 {
		t.Errorf("run ended at %d ns, want 2000", res.SimTimeNs)
	}
}

// TestPrefillerCrashFailurePolicy: the prefiller crashes at 50 000 ns,
// after A's pull and B's prefill, while B waits on the decoder; its
// replacement is ready at once. The decoder learns of the loss when it starts B's pull,
// at 60 534. Under recompute it keeps B and its 7 blocks and prefills the
// 100-token prompt itself (2000 ns): first token at 62 534. Under fail B
// fails over then: prefilled again (60 534–62 534), pulled (38 334) and
// decoded: first token at 101 878, a stall of 41 344 ns (42 µs) from the
// failure its decoder found, not from the crash.
func TestPrefillerCrashFailurePolicy(t *testing.T) {
	for _, tc := range []struct {
		recompute  bool
		firstNs    int64
		failovers  uint8
		failoverUs int32
	}{
		{true, blockedAEndNs + 2000, 0, 0},
		{false, blockedAEndNs + 2000 + blockedPullNs + cfDecodeNs, 1, 42},
	} {
		cfg := blockedConfig(t)
		cfg.Instances[1].RecomputeLoadFailures = tc.recompute
		cfg.Faults = []Fault{{Kind: FaultCrash, Instance: 0, AtNs: 50_000}}
		_, r, _ := runBlocked(t, cfg)
		if r.Status != results.Completed || r.FirstTokenNs != tc.firstNs || r.Failovers != tc.failovers ||
			r.FailoverUs != tc.failoverUs || r.ExpiredKVReads != 0 {
			t.Errorf("recompute %v: B %+v, want first token at %d, %d fail-overs stalling %d µs",
				tc.recompute, r, tc.firstNs, tc.failovers, tc.failoverUs)
		}
	}
}

// decodeFirstConfig sends two 80-token prompts sharing a 64-token prefix
// to a decode-first decoder, the second after the first has ended.
func decodeFirstConfig(t *testing.T, threshold float64) *Config {
	prefix := []kv.Segment{{ID: 42, Tokens: 64}}
	cfg := pdConfig(t, []Request{
		{ArrivalNs: 1000, PromptTokens: 80, OutputTokens: 3, Prefix: prefix},
		{ArrivalNs: 100_000, PromptTokens: 80, OutputTokens: 3, Prefix: prefix},
	})
	cfg.Instances[1].DecodeFirst, cfg.Instances[1].DecodeFirstThreshold = true, threshold
	return cfg
}

// TestDecodeFirst: the first request finds nothing cached on the decoder
// and bounces at once (1000 ns): prefill 1000–2800, pull 5000 + 26 667,
// first step 1010 — TTFT 34 477. The second finds 64 of its 80 tokens
// (0.8) cached there: at a threshold of 0.5 the decoder serves it whole,
// prefilling 16 tokens (1160 ns) and never touching the prefiller; at 0.9
// it bounces too, and its pull moves only the 16 tokens the decoder lacks
// (5000 + 5334).
func TestDecodeFirst(t *testing.T) {
	bounced := 1800 + 5000 + 26667 + int64(cfDecodeNs)
	for _, tc := range []struct {
		threshold     float64
		secondTTFTNs  int64
		secondBounces uint8
		prefillSteps  int64
	}{
		{0.5, 1160, 0, 1},
		{0.9, 1800 + 5000 + 5334 + cfDecodeNs, 1, 2},
	} {
		res := mustRun(t, decodeFirstConfig(t, tc.threshold))
		a, b := res.Records[0], res.Records[1]
		if a.FirstTokenNs-a.ArrivalNs != bounced || a.Bounces != 1 || a.PrefillInstance != 0 || a.DecodeInstance != 1 {
			t.Errorf("threshold %g: first %+v, want bounced once, TTFT %d", tc.threshold, a, bounced)
		}
		if b.FirstTokenNs-b.ArrivalNs != tc.secondTTFTNs || b.Bounces != tc.secondBounces {
			t.Errorf("threshold %g: second %+v, want TTFT %d, %d bounces", tc.threshold, b, tc.secondTTFTNs, tc.secondBounces)
		}
		if s := res.Instances[0].Stats; s.Steps != tc.prefillSteps {
			t.Errorf("threshold %g: prefiller ran %d steps, want %d", tc.threshold, s.Steps, tc.prefillSteps)
		}
		for _, r := range res.Records {
			checkAttribution(t, &r)
		}
	}
}

// TestDecodeFirstNeedsAnArrivalRouter: a router that picks the decoder
// after the prefill cannot send a request to it first.
func TestDecodeFirstNeedsAnArrivalRouter(t *testing.T) {
	cfg := decodeFirstConfig(t, 0.5)
	cfg.Router = laterRouter{}
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "picks the decoder after the prefill") {
		t.Errorf("error %v, want the router refused", err)
	}
}

// TestHandoffSettingsChecked: settings the core cannot honour are refused
// with the instance named.
func TestHandoffSettingsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string
	}{
		{"negative timeout", func(c *Config) { c.Instances[0].KVHold.TimeoutNs = -1 }, "must not be negative"},
		{"lease figures on a timeout", func(c *Config) { c.Instances[0].KVHold.LeaseNs = 1 }, "a KV hold timeout has no lease"},
		{"timeout on a lease", func(c *Config) { c.Instances[0].KVHold = KVHold{Lease: true, TimeoutNs: 1, LeaseNs: 2} },
			"a KV lease has no timeout"},
		{"heartbeats sparser than extensions", func(c *Config) {
			c.Instances[0].KVHold = KVHold{Lease: true, LeaseNs: 30, HeartbeatNs: 10, ExtendNs: 5}
		}, "0 ≤ heartbeat ≤ extension < lease"},
		{"extension past the lease", func(c *Config) {
			c.Instances[0].KVHold = KVHold{Lease: true, LeaseNs: 30, HeartbeatNs: 5, ExtendNs: 30}
		}, "0 ≤ heartbeat ≤ extension < lease"},
		{"hold on a decoder", func(c *Config) { c.Instances[1].KVHold.TimeoutNs = 1 }, "instance decode-0: only a prefill instance"},
		{"failure policy on a prefiller", func(c *Config) { c.Instances[0].RecomputeLoadFailures = true },
			"instance prefill-0: only a decode instance"},
		{"threshold above 1", func(c *Config) { c.Instances[1].DecodeFirstThreshold = 1.5 }, "must be in [0, 1]"},
		{"decode-first wafer", func(c *Config) {
			c.Instances[1].DecodeFirst = true
			c.Instances[1].Engine.Layouts = [][]engine.SlotClass{{{Count: 1, ContextTokens: 1024}}}
		}, "a wafer's slots cannot take a request first"},
	} {
		cfg := pdConfig(t, []Request{{PromptTokens: 10, OutputTokens: 1}})
		tc.set(cfg)
		if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
