package sim

import (
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// TestDecoderResumesAfterPreemptingItsOnlyRunningSequence builds the
// smallest P/D run in which a decoder's scheduling pass preempts every
// running sequence while a sequence whose KV has arrived waits holding
// blocks. Decoder: 4 blocks of 16 tokens, decode steps of 1 ms; link fast
// (1 µs latency, 1 TB/s).
//
//	A (prompt 31, output 10) arrives at 0: its KV lands on the decoder
//	  (2 blocks) and its first decode step runs from ≈2.3 µs to ≈1.0023 ms.
//	B (prompt 32, output 2) arrives at 10 µs and is handed off during that
//	  step; at its end A still fits 2 blocks and B reserves the other 2.
//	B's KV arrives during A's second step, so B waits with its 2 blocks.
//	At the end of that step A (33 tokens) needs a third block; none is
//	free, so A is preempted — and it was the only running sequence.
//
// Both requests can be served (each fits the decoder alone), and must end.
func TestDecoderResumesAfterPreemptingItsOnlyRunningSequence(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 0, PromptTokens: 31, OutputTokens: 10},
		{ArrivalNs: 10_000, PromptTokens: 32, OutputTokens: 2},
	}
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 256, 8, false), linearTimer(cfA, cfB)),
		instances(RoleDecode, 1, engineCfg(t, 4, 64, 8, false), linearTimer(1_000_000, 0))...)
	cfg := withNICs(&Config{Name: "stranded", Instances: insts, Router: &router.LeastLoaded{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}},
		hardware.Link{Name: "fast", BandwidthBps: 1e12, LatencyNs: 1000})
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, 2)
	checkDrained(t, c)
	for _, r := range c.recs.all {
		if r.Status != results.Completed {
			t.Errorf("request %d: %+v", r.ID, r)
		}
	}
}

// TestUnchunkedPromptOverBudgetEnds: with chunked prefill off, a prompt
// longer than the token budget can never be scheduled. vLLM refuses such a
// configuration (max_num_batched_tokens < max_model_len without chunking);
// the simulator must either reject it or drop the request — not leave it
// waiting forever. The same holds for a re-prefill (prompt + generated)
// that outgrows the budget after a preemption.
func TestUnchunkedPromptOverBudgetEnds(t *testing.T) {
	cfg := colocatedConfig(t, 64, []Request{{ArrivalNs: 10, PromptTokens: 100, OutputTokens: 4}})
	cfg.Instances[0].Engine.NoChunkedPrefill = true
	res, err := Run(cfg)
	if err != nil {
		if !strings.Contains(err.Error(), "max_num_batched_tokens") {
			t.Fatal(err) // an error must name the setting at fault
		}
		return
	}
	r := res.Records[0]
	if r.Status != results.Dropped || !strings.Contains(r.Reason, "64") {
		t.Errorf("record %+v: want dropped naming the 64-token budget", r)
	}
}

// TestSameInstantTransfersBatchOnDecoder: two identical requests prefilled
// on two instances hand off to one decoder at the same instant; their pulls
// share its ingress (1.5 bytes/ns each, 66 667 ns) and complete in the same
// network event at 1000 + 2000 + 5000 + 66 667 = 74 667 ns. The decoder
// should see both arrivals when it plans its next step, as the event classes
// promise ("the cluster as of the end of that instant"), and decode them as
// a batch of two: 1000 + 10·2 = 1020 ns per step.
func TestSameInstantTransfersBatchOnDecoder(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5},
		{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 5},
	}
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, 2, engineCfg(t, 100, 4096, 8, false), timer),
		instances(RoleDecode, 1, engineCfg(t, 100, 4096, 8, false), timer)...)
	cfg := withNICs(&Config{Name: "shared", Instances: insts, Router: &router.RoundRobin{},
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
	res := mustRun(t, cfg)
	const ttftNs = 2000 + 5000 + 66667 + 1020
	for _, r := range res.Records {
		if r.FirstTokenNs-r.ArrivalNs != ttftNs || r.FinishNs-r.ArrivalNs != ttftNs+4*1020 {
			t.Errorf("request %d: TTFT %d, E2E %d ns; want %d and %d", r.ID,
				r.FirstTokenNs-r.ArrivalNs, r.FinishNs-r.ArrivalNs, ttftNs, ttftNs+4*1020)
		}
	}
	in := res.Links[5]
	if in.Name != "decode-0/ingress" || in.Stats.Transfers != 2 || in.Stats.Bytes != 200_000 || in.Stats.BusyNs != 66667 {
		t.Errorf("%s: %+v, want 2 transfers, 200000 bytes, busy 66667 ns", in.Name, in.Stats)
	}
}

// TestRefusedLocalPrefillEndsOnce: a router that prefills on the decoder
// itself (llm-d's default decider) sends three requests to one wafer with
// two slots under the reject pressure policy. The third finds no slot and is
// refused while it is the instance's own local prefill: there is no
// prefiller holding its KV to release, and refusing it must release nothing
// twice. Every request ends exactly once, and the completed ones' time adds
// up.
func TestRefusedLocalPrefillEndsOnce(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 10},
		{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 10},
		{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 10},
	}
	wafer := engine.Config{MaxBatchedTokens: 1024, MaxSeqs: 8, MaxModelLen: 1 << 20,
		Layouts: [][]engine.SlotClass{{{Count: 2, ContextTokens: 1024}}}, Pressure: engine.PressureReject}
	if err := wafer.Validate(); err != nil {
		t.Fatal(err)
	}
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 256, 8, false), linearTimer(cfA, cfB)),
		instances(RoleDecode, 1, wafer, linearTimer(1_000_000, 0))...)
	llmd := router.NewLLMD(router.DefaultLLMDConfig(), NewStreams(1).Stream("router"))
	cfg := withNICs(&Config{Name: "refused-local", Instances: insts, Router: llmd,
		KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, len(reqs))
	checkDrained(t, c)
	if r := c.recs.all[2]; r.Rejections == 0 {
		t.Errorf("request 2 was never refused: %+v", r)
	}
}

// TestHeldRequestPlacedOnTheCompletingInstance: Dynamo's router holds B
// while A's prefill keeps the only worker past the queue threshold. A's one
// step ends its prefill, which releases B onto the same worker while that
// worker's step results are still being handled; B's placement must not
// plan the worker's next step in the middle of them, losing A's finish.
func TestHeldRequestPlacedOnTheCompletingInstance(t *testing.T) {
	reqs := []Request{
		{ArrivalNs: 0, PromptTokens: 40, OutputTokens: 1},
		{ArrivalNs: 0, PromptTokens: 40, OutputTokens: 1},
	}
	dc := router.DefaultDynamoConfig()
	dc.QueueThreshold = 0.5 // hold while every worker has more than 32 prompt tokens to prefill
	cfg := colocatedConfig(t, 64, reqs)
	cfg.Router = router.NewDynamo(dc, NewStreams(1).Stream("router"))
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, len(reqs))
	checkDrained(t, c)
}

// TestDeadlockedDecoderFailsItsRequests: the deadlock of
// engine.TestSharedQueueStrandsArrivedKVBehindAVictim in a cluster. A
// decoder of 6 blocks decodes A (32-token prompt, 60 tokens) when B's
// 48-token prompt reserves 3 blocks; A is preempted at context 49 and
// needs 4 blocks to re-prefill while B, its KV arrived, holds 3. With the
// shared waiting queue of earlier vLLM releases nothing can start again:
// after LockupAbortNs without a step both requests end as failed, with the
// reason naming the kind, and the decoder counts one lock-up. With
// today's order both complete.
func TestDeadlockedDecoderFailsItsRequests(t *testing.T) {
	for _, shared := range []bool{false, true} {
		reqs := []Request{
			{ArrivalNs: 0, PromptTokens: 32, OutputTokens: 60},
			{ArrivalNs: 20_000, PromptTokens: 48, OutputTokens: 5},
		}
		dec := engineCfg(t, 6, 256, 8, false)
		dec.SharedQueue = shared
		insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 4096, 8, false), linearTimer(cfA, cfB)),
			instances(RoleDecode, 1, dec, linearTimer(cfA, cfB))...)
		cfg := withNICs(&Config{Name: "deadlock", Instances: insts, Router: &router.LeastLoaded{},
			KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}, LockupAbortNs: 1_000_000,
			LockupThresholdNs: 100_000}, cfLink)
		c, err := drive(t, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, c.recs.all, len(reqs))
		checkDrained(t, c)
		want := results.Completed
		if shared {
			want = results.Failed
		}
		for _, r := range c.recs.all {
			if r.Status != want || shared && !strings.Contains(r.Reason, "decode-0 deadlock") {
				t.Errorf("shared %v: request %d ended %v (%q), want %v", shared, r.ID, r.Status, r.Reason, want)
			}
		}
		if got := c.result().Instances[1].Lockups; (got == 1) != shared {
			t.Errorf("shared %v: %d lock-ups on the decoder", shared, got)
		}
	}
}

// TestDynamoBooksTheDecoderAfterThePrefill: on vLLM's disaggregated path
// Dynamo picks the decoder when the prefill is done, and only then books
// the request's blocks there; its prefill load counts only what the
// prefiller does not cache.
func TestDynamoBooksTheDecoderAfterThePrefill(t *testing.T) {
	reqs := []Request{{ArrivalNs: 0, PromptTokens: 1000, OutputTokens: 3}}
	timer := linearTimer(cfA, cfB)
	insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 4096, 8, false), timer),
		instances(RoleDecode, 2, engineCfg(t, 100, 4096, 8, false), timer)...)
	cfg := withNICs(&Config{Name: "later", Instances: insts, KVBytesPerToken: cfKVBytes,
		Router: router.NewDynamo(router.DefaultDynamoConfig(), NewStreams(1).Stream("router")),
		Source: &sliceSource{reqs: reqs}}, cfLink)
	booked := false
	c, err := drive(t, cfg, 1, func(c *cluster, _ int64) {
		for _, f := range c.flights.all() {
			if f.phase == phasePrefilling && (f.route.Decode != router.DecodeLater ||
				c.replicas[1].blocks+c.replicas[2].blocks != 0 || c.replicas[0].prefillTokens != 1000) {
				t.Fatalf("while prefilling: decoder %d, decode blocks %d+%d, prefill tokens %d",
					f.route.Decode, c.replicas[1].blocks, c.replicas[2].blocks, c.replicas[0].prefillTokens)
			}
			if f.phase == phaseTransferring {
				booked = booked || c.replicas[f.route.Decode].blocks == 1000/16
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, 1)
	if r := c.recs.all[0]; r.DecodeInstance < 1 || !booked {
		t.Errorf("decoder %d, booked %v: want a decoder chosen and booked after the prefill", r.DecodeInstance, booked)
	}
}

// TestSharedBlocksCountOnce: with router_assume_kv_reuse a colocated
// worker's decode load counts the blocks active requests share once: two
// requests with one 64-token system prompt (4 blocks) and 32 tokens each
// of their own (2 blocks) load it with 8 blocks, not 12.
func TestSharedBlocksCountOnce(t *testing.T) {
	prefix := []kv.Segment{{ID: 7, Tokens: 64}}
	reqs := []Request{{ArrivalNs: 0, PromptTokens: 96, OutputTokens: 50, Prefix: prefix},
		{ArrivalNs: 0, PromptTokens: 96, OutputTokens: 50, Prefix: prefix}}
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Router = router.NewDynamo(router.DefaultDynamoConfig(), NewStreams(1).Stream("router"))
	cfg.RouterCountsSharedBlocks = true
	most := 0
	if _, err := drive(t, cfg, 1, func(c *cluster, _ int64) { most = max(most, c.replicas[0].blocks) }); err != nil {
		t.Fatal(err)
	}
	if most != 8 {
		t.Errorf("the worker's decode load peaked at %d blocks, want 8", most)
	}
}

// laterRouter prefills on instance 0 and, once the prefill is done (or
// streaming, its last step starts), picks decoder 1.
type laterRouter struct{}

func (laterRouter) Route(*router.Request, *router.Cluster) router.Decision {
	return router.Decision{Prefill: 0, Decode: router.DecodeLater}
}

func (laterRouter) RouteDecode(*router.Request, *router.Cluster) int { return 1 }

// TestLateDecoderTooSmallDrops: a router that picks the decoder after the
// prefill picks one too small for the request (decoder 1 holds 160 tokens,
// decoder 2 could hold it). Streaming or not, the request is dropped with
// the reason when the prefill ends, never handed to a decoder that cannot
// hold it.
func TestLateDecoderTooSmallDrops(t *testing.T) {
	for _, stream := range []bool{false, true} {
		reqs := []Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 100}}
		timer := linearTimer(cfA, cfB)
		insts := append(instances(RolePrefill, 1, engineCfg(t, 100, 64, 8, false), timer),
			instances(RoleDecode, 1, engineCfg(t, 10, 64, 8, false), timer)...)
		insts = append(insts, instances(RoleDecode, 1, engineCfg(t, 100, 64, 8, false), timer)...)
		insts[2].Name = "decode-1"
		insts[0].StreamKV = stream
		cfg := withNICs(&Config{Name: "late", Instances: insts, Router: laterRouter{},
			KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
		c, err := drive(t, cfg, 1)
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		checkConservation(t, c.recs.all, 1)
		checkDrained(t, c)
		if r := c.recs.all[0]; r.Status != results.Dropped || !strings.Contains(r.Reason, "too long for decode-0") {
			t.Errorf("stream %v: %+v, want dropped as too long for decode-0", stream, r)
		}
	}
}
