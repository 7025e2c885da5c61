package journey

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/network"
	"handoff/models/perf"
	"handoff/models/router"
	"handoff/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// reqSource yields a fixed list of requests.
type reqSource struct {
	reqs []sim.Request
	next int
}

func (s *reqSource) Next(r *sim.Request) (bool, error) {
	if s.next == len(s.reqs) {
		return false, nil
	}
	*r = s.reqs[s.next]
	r.ID = int64(s.next)
	s.next++
	return true, nil
}

// pdConfig is np prefill and nd decode instances, each step costing
// 1000 + 10·(new tokens) ns, joined by NICs of 3 GB/s and 5 µs latency,
// with 1000 bytes of KV per prompt token. Decoders hold decodeBlocks
// blocks of 16 tokens.
func pdConfig(t *testing.T, np, nd, decodeBlocks int, reqs []sim.Request) *sim.Config {
	t.Helper()
	timer := perf.StepTimerFunc(func(b *perf.Batch) int64 { return 1000 + 10*int64(b.Tokens()) })
	var insts []sim.Instance
	add := func(role sim.Role, n, blocks int) {
		for k := range n {
			ec := engine.Config{MaxBatchedTokens: 4096, MaxSeqs: 8, NumBlocks: blocks, MaxModelLen: 1 << 20}
			if err := ec.Validate(); err != nil {
				t.Fatal(err)
			}
			insts = append(insts, sim.Instance{Name: role.String() + "-" + string(rune('0'+k)), Pool: role.String(),
				Role: role, GPUs: 1, Engine: ec, Timer: timer})
		}
	}
	add(sim.RolePrefill, np, 200)
	add(sim.RoleDecode, nd, decodeBlocks)
	var names []string
	for _, in := range insts {
		names = append(names, in.Name)
	}
	link := hardware.Link{Name: "nic", BandwidthBps: 3e9, LatencyNs: 5000}
	return &sim.Config{Name: "pd", Instances: insts, Router: &router.RoundRobin{}, KVBytesPerToken: 1000,
		Topology: network.NewNICTopology(link, names, ones(len(names))), Source: &reqSource{reqs: reqs}}
}

// traceRun runs cfg with the first n requests traced and returns the trace.
func traceRun(t *testing.T, cfg *sim.Config, n int64) []byte {
	t.Helper()
	rec := Attach(cfg, n)
	if _, err := sim.Run(cfg); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rec.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGoldenPD traces two overlapping requests through one prefill and one
// decode instance. Request 1 arrives at 500 ns while request 0's prefill
// step runs [0, 2000], so their prefill spans overlap and take two lanes.
// Regenerate with `go test ./sim/journey -run Golden -update`.
func TestGoldenPD(t *testing.T) {
	reqs := []sim.Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 3},
		{ArrivalNs: 500, PromptTokens: 100, OutputTokens: 3}}
	got := traceRun(t, pdConfig(t, 1, 1, 200, reqs), 2)
	checkTrace(t, got, 2)
	golden := filepath.Join("testdata", "pd.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("trace differs from %s (rerun with -update if the change is intended):\n%s", golden, got)
	}
	for _, name := range []string{"prefill-0 (pool prefill, prefill)", "prefill-0 (pool prefill, prefill) lane 2",
		"decode-0 (pool decode, decode)", "prefill-0/egress", "decode-0/ingress", `"router"`} {
		if !bytes.Contains(got, []byte(name)) {
			t.Errorf("trace lacks the track name %s", name)
		}
	}
}

// TestTraceLimitAndShape runs a busy cluster whose small decoders preempt,
// traces its first 10 of 60 requests, and checks the trace is well formed:
// no events of requests ≥ 10, proper nesting on every thread, flow pairs
// bound to slices of their request, and identical bytes on a rerun.
func TestTraceLimitAndShape(t *testing.T) {
	var reqs []sim.Request
	for i := range 60 {
		reqs = append(reqs, sim.Request{ArrivalNs: int64(i) * 3000, PromptTokens: 50 + 37*(i%7), OutputTokens: 20 + i%13})
	}
	first := traceRun(t, pdConfig(t, 2, 2, 30, reqs), 10)
	s := checkTrace(t, first, 10)
	if s.requests != 10 || s.flows == 0 || s.spans == 0 {
		t.Errorf("trace covers %d requests with %d spans and %d flows, want 10 requests and some of each",
			s.requests, s.spans, s.flows)
	}
	again := traceRun(t, pdConfig(t, 2, 2, 30, reqs), 10)
	if !bytes.Equal(first, again) {
		t.Error("two identical runs wrote different traces")
	}
}

// TestTraceLockup traces a prefiller pinned by KV its decoder cannot
// take (both of 4 blocks; A fills the decoder while the prefiller holds B
// and C, and D waits): its lock-up is a slice on its track, named by
// kind, with no request, nested properly among the requests' slices (the
// decoder's preemption loops, at a threshold of 1 µs, are others).
func TestTraceLockup(t *testing.T) {
	reqs := []sim.Request{{ArrivalNs: 0, PromptTokens: 48, OutputTokens: 16},
		{ArrivalNs: 100, PromptTokens: 32, OutputTokens: 2}, {ArrivalNs: 100, PromptTokens: 32, OutputTokens: 2},
		{ArrivalNs: 10_000, PromptTokens: 32, OutputTokens: 2}}
	cfg := pdConfig(t, 1, 1, 4, reqs)
	cfg.Instances[0].Engine.NumBlocks, cfg.LockupThresholdNs = 4, 1000
	got := traceRun(t, cfg, 4)
	if s := checkTrace(t, got, 4); s.own == 0 || s.requests != 4 {
		t.Errorf("%d lock-up slices and %d requests traced, want some and 4", s.own, s.requests)
	}
	if !bytes.Contains(got, []byte(`{"name":"lock-up: pinned","cat":"journey","ph":"X","ts":24.12,"dur":40.854,"pid":2,"tid":4,"args":{}}`)) {
		t.Errorf("no pinned slice on the prefiller's lane from 24.12 µs (once its pool holds B and C) to 64.974 µs:\n%s", got)
	}
}

// TestTraceColocated traces a colocated instance, where a request's
// prefill and decode spans touch and its first token sits at their seam.
func TestTraceColocated(t *testing.T) {
	var reqs []sim.Request
	for i := range 20 {
		reqs = append(reqs, sim.Request{ArrivalNs: int64(i) * 700, PromptTokens: 64 + 16*(i%5), OutputTokens: 8 + i%4})
	}
	cfg := pdConfig(t, 1, 1, 200, reqs)
	cfg.Instances = cfg.Instances[:1]
	cfg.Instances[0].Role, cfg.Topology = sim.RoleColocated, nil
	s := checkTrace(t, traceRun(t, cfg, 8), 8)
	if s.requests != 8 || s.flows != 8 {
		t.Errorf("%d requests, %d flows; want 8 requests, each with one flow from the router", s.requests, s.flows)
	}
}

// TestFlowBinding feeds a recorder by hand: a flow whose target slice
// starts before its source slice (its "f" must wait for the "s"), a flow to
// a track with no events of its request (dropped), and events of a request
// past the limit (ignored).
func TestFlowBinding(t *testing.T) {
	r := &Recorder{keep: func(id int64) bool { return id < 2 }, instances: []string{"a"}, links: []string{"l"}}
	inst, link := sim.Track{Kind: sim.TrackInstance}, sim.Track{Kind: sim.TrackLink}
	r.Span(0, link, "transfer", 5, 20)
	r.Span(0, inst, "prefill", 8, 10)
	r.Flow(0, inst, 10, link, 10)
	r.Flow(0, inst, 10, sim.Track{Kind: sim.TrackRouter}, 10)
	r.Span(2, inst, "prefill", 0, 30)
	r.Instant(2, inst, "first token", 30)
	r.Flow(2, inst, 30, link, 30)
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	s := checkTrace(t, buf.Bytes(), 2)
	if s.requests != 1 || s.spans != 2 || s.flows != 1 {
		t.Errorf("%+v, want request 0 alone with 2 spans and 1 flow:\n%s", s, buf.Bytes())
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"ph":"s","ts":0.008,"pid":2,"tid":1,"id":1,`)) ||
		!bytes.Contains(buf.Bytes(), []byte(`"ph":"f","ts":0.008,"pid":3,"tid":1,"id":1,"bp":"e"`)) {
		t.Errorf("flow 1 should start and end at 8 ns, the start of the prefill:\n%s", buf.Bytes())
	}
}

// traceStats counts what checkTrace saw.
type traceStats struct{ requests, spans, flows, own int }

type traceEvent struct {
	Name string   `json:"name"`
	Cat  string   `json:"cat"`
	Ph   string   `json:"ph"`
	Ts   *float64 `json:"ts"`
	Dur  *float64 `json:"dur"`
	Pid  int      `json:"pid"`
	Tid  int      `json:"tid"`
	S    string   `json:"s"`
	ID   int      `json:"id"`
	Bp   string   `json:"bp"`
	Args struct {
		Request *int64 `json:"request"`
		Name    string `json:"name"`
	} `json:"args"`
}

// open is a slice on a thread's stack while checking nesting.
type open struct {
	startNs, endNs, request int64
	instant                 bool
}

// checkTrace parses a trace and checks the rules the viewers rely on.
func checkTrace(t *testing.T, data []byte, n int64) traceStats {
	t.Helper()
	var doc struct {
		TraceEvents     []traceEvent `json:"traceEvents"`
		DisplayTimeUnit string       `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	if doc.DisplayTimeUnit != "ms" {
		t.Errorf("displayTimeUnit = %q", doc.DisplayTimeUnit)
	}
	named, stacks := map[[2]int]bool{}, map[[2]int][]open{}
	flowEnds := map[int]string{}
	requests := map[int64]bool{}
	var s traceStats
	lastNs := int64(math.MinInt64)
	for i, e := range doc.TraceEvents {
		if e.Ph == "M" {
			if e.Name == "thread_name" && e.Args.Name != "" {
				named[[2]int{e.Pid, e.Tid}] = true
			}
			continue
		}
		thread := [2]int{e.Pid, e.Tid}
		if e.Args.Request == nil && strings.HasPrefix(e.Name, "lock-up: ") { // an instance's own span
			if e.Ph != "X" || e.Pid != pidInstances {
				t.Fatalf("event %d (%s): an instance's own span, but %+v", i, e.Name, e)
			}
			e.Args.Request, s.own = new(int64(ownID)), s.own+1
		}
		switch {
		case e.Ts == nil || e.Args.Request == nil:
			t.Fatalf("event %d (%s) lacks ts or args.request", i, e.Name)
		case *e.Args.Request >= n || *e.Args.Request < 0 && *e.Args.Request != ownID:
			t.Fatalf("event %d (%s) belongs to request %d, outside the traced %d", i, e.Name, *e.Args.Request, n)
		case !named[thread]:
			t.Fatalf("event %d (%s) is on unnamed thread %v", i, e.Name, thread)
		}
		req, tsNs := *e.Args.Request, ns(*e.Ts)
		if req != ownID {
			requests[req] = true
		}
		if tsNs < lastNs {
			t.Fatalf("event %d (%s) at %d ns comes after one at %d ns", i, e.Name, tsNs, lastNs)
		}
		lastNs = tsNs
		switch e.Ph {
		case "X", "i":
			durNs := int64(0)
			if e.Ph == "X" {
				if e.Dur == nil || *e.Dur < 0 {
					t.Fatalf("event %d (%s) has no or a negative dur", i, e.Name)
				}
				durNs, s.spans = ns(*e.Dur), s.spans+1
			} else if e.S != "t" {
				t.Errorf("instant %d (%s) has scope %q, want t", i, e.Name, e.S)
			}
			stacks[thread] = push(t, stacks[thread], open{tsNs, tsNs + durNs, req, e.Ph == "i"}, i)
		case "s", "f":
			st := stacks[thread]
			if len(st) == 0 || st[len(st)-1].request != req {
				t.Fatalf("flow end %d (%s %d) binds to no slice of request %d on %v", i, e.Ph, e.ID, req, thread)
			}
			if st[len(st)-1].instant { // Perfetto binds flows to slices only, and drops these
				t.Fatalf("flow end %d (%s %d) binds to an instant of request %d on %v", i, e.Ph, e.ID, req, thread)
			}
			if e.Ph == "f" && (flowEnds[e.ID] != "s" || e.Bp != "e") {
				t.Fatalf("flow %d: an f (bp %q) after %q, want one s then one f with bp e", e.ID, e.Bp, flowEnds[e.ID])
			}
			if e.Ph == "s" && flowEnds[e.ID] != "" {
				t.Fatalf("flow id %d reused", e.ID)
			}
			flowEnds[e.ID] = e.Ph
		default:
			t.Fatalf("event %d has phase %q", i, e.Ph)
		}
	}
	for id, last := range flowEnds {
		if last != "f" {
			t.Errorf("flow %d has no f", id)
		}
	}
	s.requests, s.flows = len(requests), len(flowEnds)
	return s
}

// push adds a slice to a thread's stack the way Perfetto does: slices that
// ended at or before its start are closed (instants at one time stack), and
// what remains open must contain it.
func push(t *testing.T, st []open, o open, i int) []open {
	t.Helper()
	for len(st) > 0 {
		top := st[len(st)-1]
		zero := top.startNs == top.endNs && o.startNs == o.endNs
		if top.endNs > o.startNs || top.endNs == o.startNs && zero {
			break
		}
		st = st[:len(st)-1]
	}
	if len(st) > 0 && o.endNs > st[len(st)-1].endNs {
		t.Fatalf("event %d [%d, %d] overlaps [%d, %d] on its thread without nesting",
			i, o.startNs, o.endNs, st[len(st)-1].startNs, st[len(st)-1].endNs)
	}
	return append(st, o)
}

func ns(us float64) int64 { return int64(math.Round(us * 1000)) }

func TestMicros(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{{0, "0"}, {5000, "5"}, {1234567, "1234.567"}, {1500, "1.5"}, {1, "0.001"}, {10, "0.01"}, {-2500, "-2.5"}} {
		if got := micros(tc.ns); string(got) != tc.want {
			t.Errorf("micros(%d) = %s, want %s", tc.ns, got, tc.want)
		}
	}
}

// TestLanes checks the packing by hand, lanes from 0: on one track,
// request 0 spans [0, 10] then [10, 20] (one chain of siblings: lane 0);
// request 1 spans [5, 15] (overlaps it: lane 1); request 2 spans [21, 30]
// (lane 0 is free again, 20 < 21); request 3 spans [30, 40] (lane 0 ends
// at 30, not before: lane 1, free since 15).
func TestLanes(t *testing.T) {
	tr := sim.Track{Kind: sim.TrackInstance}
	items := []item{
		{id: 0, track: tr, startNs: 0, endNs: 10}, {id: 0, track: tr, startNs: 10, endNs: 20},
		{id: 1, track: tr, startNs: 5, endNs: 15}, {id: 2, track: tr, startNs: 21, endNs: 30},
		{id: 3, track: tr, startNs: 30, endNs: 40},
	}
	lane, lanes := laneItems(items)
	got := map[int64][]int{}
	for i, it := range items {
		got[it.id] = append(got[it.id], lane[i])
	}
	want := map[int64][]int{0: {0, 0}, 1: {1}, 2: {0}, 3: {1}}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("request %d on lanes %v, want %v", id, got[id], w)
		}
	}
	if lanes[tr] != 2 {
		t.Errorf("%d lanes, want 2", lanes[tr])
	}
}

func TestAttachRejectsNoRequests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Attach(cfg, 0) did not panic")
		}
	}()
	Attach(&sim.Config{}, 0)
}

// ones returns n ones: one device per instance.
func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
