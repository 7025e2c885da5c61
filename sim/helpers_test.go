package sim

import (
	"fmt"
	"reflect"
	"testing"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/network"
	"handoff/models/perf"
	"handoff/results"
)

// sliceSource yields a fixed list of requests in order.
type sliceSource struct {
	reqs []Request
	next int
}

func (s *sliceSource) Next(r *Request) (bool, error) {
	if s.next == len(s.reqs) {
		return false, nil
	}
	*r = s.reqs[s.next]
	s.next++
	return true, nil
}

// linearTimer prices a step at aNs + bNs·(new tokens): the closed form every
// hand-derived expectation in these tests uses.
func linearTimer(aNs, bNs int64) perf.StepTimer {
	return perf.StepTimerFunc(func(b *perf.Batch) int64 { return aNs + bNs*int64(b.Tokens()) })
}

// engineCfg is a validated engine configuration with block size 16.
func engineCfg(t testing.TB, blocks, budget, seqs int, caching bool) engine.Config {
	t.Helper()
	c := engine.Config{MaxBatchedTokens: budget, MaxSeqs: seqs, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, PrefixCaching: caching}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// instances returns n instances of one role sharing an engine configuration
// and a step timer, named role-k.
func instances(role Role, n int, ec engine.Config, timer perf.StepTimer) []Instance {
	var out []Instance
	for k := range n {
		out = append(out, Instance{Name: fmt.Sprintf("%s-%d", role, k), Pool: role.String(),
			Role: role, GPUs: 1, Engine: ec, Timer: timer})
	}
	return out
}

// withNICs joins cfg's instances with a NIC topology over link l.
func withNICs(cfg *Config, l hardware.Link) *Config {
	var names []string
	var devices []int
	for _, in := range cfg.Instances {
		names, devices = append(names, in.Name), append(devices, in.GPUs)
	}
	cfg.Topology = network.NewNICTopology(l, names, devices)
	return cfg
}

// driveEventsMax bounds the events of an audited run: the tests' runs take
// well under a million, so more means a livelock.
const driveEventsMax = 5_000_000

// drive runs cfg like Run does, but keeps the cluster so a test can inspect
// the instances afterwards, and audits invariants as it goes: time never
// goes back, the run ends within driveEventsMax events, and (when
// auditEvery > 0, every auditEvery events) every KV pool passes Check and its
// references equal the blocks its live sequences hold.
//
// Each hook, if any, sees the cluster just before an event at atNs is
// applied, that is, the state that held since the previous event.
func drive(t testing.TB, cfg *Config, auditEvery int64, hooks ...func(c *cluster, atNs int64)) (*cluster, error) {
	t.Helper()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := newCluster(cfg)
	c.start()
	for c.q.len() > 0 && c.err == nil {
		before := c.nowNs
		e := c.q.pop()
		for _, h := range hooks {
			h(c, e.at)
		}
		c.dispatch(e)
		if c.nowNs < before {
			t.Fatalf("time went back from %d to %d ns", before, c.nowNs)
		}
		if c.events > driveEventsMax {
			t.Fatalf("no end after %d events at t=%d ns: livelock", c.events, c.nowNs)
		}
		if auditEvery > 0 && c.events%auditEvery == 0 {
			auditBlocks(t, c)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, c.finish()
}

// auditBlocks checks block conservation on every instance: the pool is
// consistent, and the references it counts are exactly the blocks held by the
// sequences of requests in flight there.
func auditBlocks(t testing.TB, c *cluster) {
	t.Helper()
	held := make([]int, len(c.replicas))
	for _, f := range c.flights.all() {
		if f.phase == phaseDone {
			continue
		}
		if f.pseq != nil {
			held[f.route.Prefill] += c.replicas[f.route.Prefill].eng.SeqBlocks(f.pseq)
		}
		if f.dseq != nil && f.dseq != f.pseq {
			held[f.route.Decode] += c.replicas[f.route.Decode].eng.SeqBlocks(f.dseq)
		}
	}
	for i := range c.replicas {
		for _, st := range c.replicas[i].hold.stranded.q {
			held[i] += c.replicas[i].eng.SeqBlocks(st.seq)
		}
		in := c.replicas[i].eng
		pool := in.Pool()
		if err := pool.Check(); err != nil {
			t.Fatalf("t=%d ns, %s: %v", c.nowNs, c.cfg.Instances[i].Name, err)
		}
		if refs := pool.References(); refs != held[i]+in.UncountedBlocks() {
			t.Fatalf("t=%d ns, %s: pool counts %d references, sequences hold %d blocks",
				c.nowNs, c.cfg.Instances[i].Name, refs, held[i])
		}
		auditTiers(t, c, i)
	}
}

// auditTiers checks instance i's lower tiers: each is consistent, holds
// no more than its capacity with the swap room reserved in it, and the
// host tier reserves exactly the blocks of the sequences swapped out to
// it.
func auditTiers(t testing.TB, c *cluster, i int) {
	t.Helper()
	in := c.replicas[i].eng
	for _, tr := range c.cfg.Instances[i].Engine.Tiers {
		b := tr.Blocks
		if err := b.Check(); err != nil {
			t.Fatalf("t=%d ns, %s: %v", c.nowNs, c.cfg.Instances[i].Name, err)
		}
		if b.Len()+b.Reserved() > b.Capacity() {
			t.Fatalf("t=%d ns, %s: %s tier holds %d blocks and reserves %d of %d", c.nowNs,
				c.cfg.Instances[i].Name, tr.Kind, b.Len(), b.Reserved(), b.Capacity())
		}
		if tr.Kind == engine.TierHost && b.Reserved() != in.HostBlocksUsed() {
			t.Fatalf("t=%d ns, %s: the host tier reserves %d blocks, swapped sequences hold %d", c.nowNs,
				c.cfg.Instances[i].Name, b.Reserved(), in.HostBlocksUsed())
		}
	}
}

// checkDrained asserts the end state of a finished run: nothing in flight,
// every instance idle with an empty, consistent KV pool.
func checkDrained(t testing.TB, c *cluster) {
	t.Helper()
	for i := range c.replicas {
		in, name := c.replicas[i].eng, c.cfg.Instances[i].Name
		if in.Busy() || !in.Idle() {
			t.Errorf("%s not idle: busy=%v waiting=%d running=%d pulling=%d holding=%d", name,
				in.Busy(), in.Waiting(), in.Running(), in.Pulling(), in.Holding())
		}
		if u := in.Pool().UsedBlocks(); u != 0 {
			t.Errorf("%s: %d KV blocks still used", name, u)
		}
		if err := in.Pool().Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if n := c.replicas[i].outstanding; n != 0 {
			t.Errorf("%s: %d requests still outstanding", name, n)
		}
	}
	for ref, f := range c.flights.all() {
		if f.phase != phaseDone {
			t.Errorf("flight %d still live: request %d", ref, f.req.ID)
		}
	}
	if c.net != nil && c.net.Active() != 0 {
		t.Errorf("%d transfers still in the network", c.net.Active())
	}
}

// checkConservation asserts that every arrived request ended exactly once,
// with dense IDs, consistent times, and the fields its status implies.
func checkConservation(t testing.TB, recs []results.Record, arrived int) {
	t.Helper()
	if len(recs) != arrived {
		t.Fatalf("%d records for %d arrivals", len(recs), arrived)
	}
	var counts [results.Abandoned + 1]int
	for i := range recs {
		r := &recs[i]
		counts[r.Status]++
		if r.ID != int64(i) {
			t.Fatalf("record %d has ID %d", i, r.ID)
		}
		if r.FinishNs < r.ArrivalNs {
			t.Errorf("request %d finished at %d ns before arriving at %d ns", r.ID, r.FinishNs, r.ArrivalNs)
		}
		checkStatus(t, r)
		checkAttribution(t, r)
	}
	if counts[results.Completed]+counts[results.Rejected]+counts[results.Dropped]+counts[results.Failed]+counts[results.Abandoned] != arrived {
		t.Errorf("statuses %v do not sum to %d arrivals", counts, arrived)
	}
}

func checkStatus(t testing.TB, r *results.Record) {
	t.Helper()
	switch r.Status {
	case results.Completed:
		if r.Reason != "" || r.FirstTokenNs <= r.ArrivalNs || r.FinishNs < r.FirstTokenNs || r.OutputTokens < 1 {
			t.Errorf("completed request %+v is inconsistent", *r)
		}
	case results.Dropped, results.Rejected, results.Failed, results.Abandoned:
		if r.Reason == "" {
			t.Errorf("request %d ended %v without a reason", r.ID, r.Status)
		}
	default:
		t.Errorf("request %d has status %v", r.ID, r.Status)
	}
}

// sameResult reports the first difference between two results of the same
// configuration, or "".
func sameResult(a, b *Result) string {
	switch {
	case len(a.Records) != len(b.Records):
		return fmt.Sprintf("%d vs %d records", len(a.Records), len(b.Records))
	case a.Events != b.Events || a.SimTimeNs != b.SimTimeNs:
		return fmt.Sprintf("events %d vs %d, end %d vs %d ns", a.Events, b.Events, a.SimTimeNs, b.SimTimeNs)
	case !reflect.DeepEqual(a.ITL, b.ITL):
		return "ITL histograms differ"
	case !reflect.DeepEqual(a.Instances, b.Instances):
		return fmt.Sprintf("instance results differ:\n%+v\n%+v", a.Instances, b.Instances)
	case !reflect.DeepEqual(a.Links, b.Links):
		return "link results differ"
	case !reflect.DeepEqual(a.LockupChains, b.LockupChains):
		return fmt.Sprintf("lock-up chains differ:\n%+v\n%+v", a.LockupChains, b.LockupChains)
	}
	for i := range a.Records {
		if a.Records[i] != b.Records[i] {
			return fmt.Sprintf("record %d: %+v vs %+v", i, a.Records[i], b.Records[i])
		}
	}
	return ""
}

// mustRun runs cfg and fails the test on error.
func mustRun(t testing.TB, cfg *Config) *Result {
	t.Helper()
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkAttribution asserts that an ended request's time components add up
// exactly, none negative: the TTFT ones to its TTFT when it had a first
// token, all of them to its life (FinishNs − ArrivalNs) — for a completed
// request, the decode ones to the time from its first token to its end.
// A request that delivered tokens had a first token after its arrival.
func checkAttribution(t testing.TB, r *results.Record) {
	t.Helper()
	if r.OutputTokens > 0 && r.FirstTokenNs <= r.ArrivalNs {
		t.Errorf("request %d: %d output tokens, first token at %d ns for an arrival at %d ns", r.ID,
			r.OutputTokens, r.FirstTokenNs, r.ArrivalNs)
	}
	var ttft, decode int64
	for k, v := range r.Time {
		if v < 0 {
			t.Errorf("request %d: negative %s time %d ns", r.ID, results.TimeNames[k], v)
		}
		if k < results.FirstDecodeTime {
			ttft += v
		} else {
			decode += v
		}
	}
	if r.FirstTokenNs != 0 && ttft != r.FirstTokenNs-r.ArrivalNs || ttft+decode != r.FinishNs-r.ArrivalNs {
		t.Errorf("request %d (%v): components sum to TTFT %d and in all %d ns, want %d (first token at %d) and %d (%v)",
			r.ID, r.Status, ttft, ttft+decode, r.FirstTokenNs-r.ArrivalNs, r.FirstTokenNs, r.FinishNs-r.ArrivalNs, r.Time)
	}
	if r.Status != results.Completed {
		return
	}
	waited, queued := int64(0), r.Time[results.TPrefillQueue]+r.Time[results.TDecodeFirst]+
		r.Time[results.TDecodeQueue]+r.Time[results.TReprefill]+r.Time[results.TRejection]
	for k, ns := range r.Waits {
		if ns < 0 {
			t.Errorf("request %d: negative %s wait %d ns", r.ID, results.WaitNames[k], ns)
		}
		waited += ns
	}
	if waited > queued {
		t.Errorf("request %d: waits by cause %v sum to %d ns, more than its %d ns of queueing (%v)", r.ID,
			r.Waits, waited, queued, r.Time)
	}
}

// resultsRecord is an empty record for request id, as onArrival makes it.
func resultsRecord(id int64) results.Record {
	return results.Record{ID: id, PrefillInstance: -1, DecodeInstance: -1}
}
