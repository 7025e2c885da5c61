package results

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// attrRecords are three completed requests and a dropped one, on a prefill
// instance owned by acme (0) and a decode instance owned by nvidia (1).
// Times in ms:
//
//	   router pq  pc  xfer dqf | dcomp dqueue rejection   TTFT decode
//	A    30   30  30   60   0  |  900                      150   900
//	B     0    0  60   30  60  |  300   150    150         150   600  (rejected once)
//	C     0   30  60    0  60  |  300                      150   300  (colocated on 0)
//	D  1000 (dropped: ignored)
//
// Component means over the 3 completed: router 10, prefill queue 20,
// prefill compute 50, transfer 30, decode queue first 40 (sum 150 = mean
// TTFT); decode compute 500, decode queue 50, rejection 50 (sum 600).
// Owners: acme has A's and B's prefill (60+60), C's prefill, first
// queueing and decode (90+60 | 300): 270/3 = 90 | 100. nvidia has B's
// first queueing (60) and A's and B's decode (900+300+150): 20 | 450.
// nobody has the router and transfers (30+60+30) and B's rejection (150):
// 40 | 50. Sums: 90+20+40 = 150, 100+450+50 = 600.
func attrRecords() ([]Record, RunInfo) {
	rec := func(pf, dec int32, st Status, ts ...int64) Record {
		r := Record{PrefillInstance: pf, DecodeInstance: dec, Status: st}
		for k, t := range ts {
			r.Time[k] = t * ms
		}
		return r
	}
	recs := []Record{
		rec(0, 1, Completed, 0, 30, 30, 30, 0, 60, 0, 900),
		rec(0, 1, Completed, 0, 0, 0, 60, 0, 30, 60, 300, 150, 0, 0, 150),
		rec(0, -1, Completed, 0, 0, 30, 60, 0, 0, 60, 300),
		rec(-1, -1, Dropped, 0, 1000),
	}
	recs[1].Rejections, recs[1].WastedTokens = 1, 5
	recs[3].Rejections, recs[3].WastedTokens = 2, 3
	info := RunInfo{Instances: []InstanceInfo{
		{Name: "p0", Pool: "prefill", Role: RolePrefill, Owner: "acme"},
		{Name: "d0", Pool: "decode", Role: RoleDecode, Owner: "nvidia"},
	}}
	return recs, info
}

func TestAttributionByHand(t *testing.T) {
	recs, info := attrRecords()
	a := Summarize(recs, nil, info).Attribution
	wantTTFT := map[string]float64{"frontend": 0, "router_queue": 0.010, "prefill_queue": 0.020, "prefill_compute": 0.050, "onboard": 0,
		"transfer": 0.030, "decode_queue_first": 0.040}
	wantDecode := map[string]float64{"decode_compute": 0.500, "decode_queue": 0.050, "reprefill": 0,
		"swap": 0, "rejection": 0.050, "emit": 0}
	checkMap(t, "ttft", a.TTFTS, wantTTFT)
	checkMap(t, "decode", a.DecodeS, wantDecode)
	checkOwners(t, a.ByOwner, map[string]OwnerTime{
		"acme":   {TTFTS: 0.090, DecodeS: 0.100, TotalS: 0.190},
		"nvidia": {TTFTS: 0.020, DecodeS: 0.450, TotalS: 0.470},
		"nobody": {TTFTS: 0.040, DecodeS: 0.050, TotalS: 0.090},
	})

	// Charging the transfer to nvidia moves its 30 ms of mean TTFT there.
	info.TransferOwner = "nvidia"
	checkOwners(t, Summarize(recs, nil, info).Attribution.ByOwner, map[string]OwnerTime{
		"acme":   {TTFTS: 0.090, DecodeS: 0.100, TotalS: 0.190},
		"nvidia": {TTFTS: 0.050, DecodeS: 0.450, TotalS: 0.500},
		"nobody": {TTFTS: 0.010, DecodeS: 0.050, TotalS: 0.060},
	})
}

func TestAttributionUnknownInstance(t *testing.T) {
	// No InstanceInfo: instance time goes to "unknown", router time to nobody.
	recs := []Record{{PrefillInstance: 0, DecodeInstance: 1, Status: Completed,
		Time: [NumTimes]int64{TRouter: 2 * ms, TPrefillCompute: 6 * ms, TDecodeCompute: 4 * ms}}}
	checkOwners(t, Summarize(recs, nil, RunInfo{}).Attribution.ByOwner, map[string]OwnerTime{
		"unknown": {TTFTS: 0.006, DecodeS: 0.004, TotalS: 0.010},
		"nobody":  {TTFTS: 0.002, TotalS: 0.002},
	})
}

func TestPreemptionSummary(t *testing.T) {
	recs, _ := attrRecords()
	pd := []InstanceInfo{
		// The prefill instance's counters are left out of a P/D summary,
		// but for its lock-ups: a prefiller locks up too.
		{Role: RolePrefill, BusyNs: 1000, PrefillBusyNs: 1000, Preemptions: 50, Cascades: 9, LongestCascade: 9,
			Lockups: 1, LockupNs: 5e8, LockSpells: [NumLockKinds]int{LockPinned: 1}, LockNs: [NumLockKinds]int64{LockPinned: 5e8}},
		{Role: RoleDecode, BusyNs: 3000, PrefillBusyNs: 600, Preemptions: 4, ReprefillTokens: 100,
			Cascades: 1, LongestCascade: 3, CascadeNs: 5e8, Lockups: 2, LockupNs: 1e9, SwapOuts: 1,
			LockSpells: [NumLockKinds]int{LockDeadlock: 1, LockPreemptionLoop: 1}, LockNs: [NumLockKinds]int64{LockDeadlock: 4e8, LockPreemptionLoop: 6e8}},
		{Role: RoleDecode, BusyNs: 1000, PrefillBusyNs: 200, Preemptions: 1, ReprefillTokens: 20,
			Cascades: 2, LongestCascade: 2, CascadeNs: 2.5e8},
	}
	colocated := []InstanceInfo{
		{Role: RoleColocated, BusyNs: 2000, PrefillBusyNs: 500, Preemptions: 2},
		{Role: RoleColocated},
	}
	tests := []struct {
		name  string
		insts []InstanceInfo
		want  PreemptionSummary
	}{
		// Decoders: (600+200)/(3000+1000) = 0.2 of busy time on prefill.
		{"pd", pd, PreemptionSummary{Count: 5, ReprefillTokens: 120, DecoderPrefillShare: 0.2, Cascades: 3,
			LongestCascade: 3, CascadeS: 0.75, Lockups: 3, LockupS: 1.5, SwapOuts: 1}},
		// All instances: 500/(2000+0).
		{"colocated", colocated, PreemptionSummary{Count: 2, DecoderPrefillShare: 0.25}},
		{"never busy", []InstanceInfo{{Role: RoleDecode}}, PreemptionSummary{}},
		{"no instances", nil, PreemptionSummary{}},
	}
	for _, tc := range tests {
		// Rejections and wasted tokens come from all records: 1+2, 5+3.
		tc.want.Rejections, tc.want.WastedTokens = 3, 8
		got := Summarize(recs, nil, RunInfo{Instances: tc.insts}).Preemption
		kinds, chains := got.LockupKinds, got.LockupChains
		got.LockupKinds, got.LockupChains = nil, nil
		if !reflect.DeepEqual(got, tc.want) || chains == nil || len(chains) != 0 {
			t.Errorf("%s: %+v\nwant %+v (chains %v)", tc.name, got, tc.want, chains)
		}
		if len(kinds) != NumLockKinds {
			t.Errorf("%s: lock-up kinds %v, want every kind", tc.name, kinds)
		}
		if tc.name == "pd" && (kinds["pinned"] != LockupFigures{1, 0.5} || kinds["deadlock"] != LockupFigures{1, 0.4} ||
			kinds["preemption_loop"] != LockupFigures{1, 0.6}) {
			t.Errorf("pd: lock-up kinds %v, want one spell of each: pinned 0.5 s, deadlock 0.4 s, loop 0.6 s", kinds)
		}
	}
}

func TestSummarizeInstances(t *testing.T) {
	insts := []InstanceInfo{{Name: "d0", Pool: "decode", Role: RoleDecode, GPUs: 2, BusyNs: 4e9,
		PrefillBusyNs: 1e9, Preemptions: 3, CascadeNs: 5e8, Rejections: 7, Waits: [NumWaits]int64{WaitKV: 2e9},
		Lockups: 1, LockupNs: 3e9, LockSpells: [NumLockKinds]int{LockDeadlock: 1}, LockNs: [NumLockKinds]int64{LockDeadlock: 3e9}},
		{Name: "idle", Pool: "p", Owner: "o"}}
	sum := Summarize(nil, nil, RunInfo{Instances: insts})
	noWait := map[string]float64{"busy": 0, "max_num_seqs": 0, "kv_blocks": 0, "token_budget": 0}
	kvWait := map[string]float64{"busy": 0, "max_num_seqs": 0, "kv_blocks": 2, "token_budget": 0}
	noLock := map[string]LockupFigures{"deadlock": {}, "preemption_loop": {}, "pinned": {}}
	deadlock := map[string]LockupFigures{"deadlock": {1, 3}, "preemption_loop": {}, "pinned": {}}
	want := []InstanceSummary{
		{Name: "d0", Pool: "decode", Role: RoleDecode, Owner: "decode", GPUs: 2, BusyS: 4, PrefillShare: 0.25,
			Preemptions: 3, CascadeS: 0.5, Rejections: 7, WaitS: kvWait, Lockups: 1, LockupS: 3, LockupKinds: deadlock},
		{Name: "idle", Pool: "p", Owner: "o", WaitS: noWait, LockupKinds: noLock},
	}
	if !reflect.DeepEqual(sum.Instances, want) {
		t.Errorf("instances %+v\nwant %+v", sum.Instances, want)
	}
	if w := (WaitSummary{PrefillS: noWait, DecodeS: kvWait}); !reflect.DeepEqual(sum.Waits, w) {
		t.Errorf("waits %+v, want %+v", sum.Waits, w)
	}
}

func TestWriteTableAttribution(t *testing.T) {
	recs, info := attrRecords()
	info.Instances[1].Preemptions, info.Instances[1].Lockups, info.Instances[1].LockupNs = 4, 1, 1.5e9
	var buf bytes.Buffer
	if err := WriteTable(&buf, Summarize(recs, nil, info)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"  TTFT ms   router_queue 10.000   prefill_queue 20.000   prefill_compute 50.000   " +
			"transfer 30.000   decode_queue_first 40.000\n",
		// Zero components (reprefill, swap) are left out.
		"  decode s  decode_compute 0.500   decode_queue 0.050   rejection 0.050\n",
		// 90/150, 40/150, 20/150 | 450/600, 100/600, 50/600.
		"  by owner  TTFT: acme 60%, nobody 27%, nvidia 13%   decode: nvidia 75%, acme 17%, nobody 8%\n",
		"preemption  4 preemptions   0 re-prefill tokens   decoder prefill 0.0%   lock-ups 1 (1.50 s)" +
			"   rejections 3 (8 tokens wasted)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRequestsCSVHeaderNamesTimes(t *testing.T) {
	cols := strings.Split(RequestsCSVHeader, ",")
	for k, name := range WaitNames {
		if got := cols[len(cols)-NumWaits+k]; got != "wait_"+name+"_s" {
			t.Errorf("column %d is %q, want %q", len(cols)-NumWaits+k, got, "wait_"+name+"_s")
		}
	}
	cols = cols[:len(cols)-NumWaits]
	tail := cols[len(cols)-NumTimes:]
	for k, name := range TimeNames {
		if tail[k] != name+"_s" {
			t.Errorf("column %d is %q, want %q", len(cols)-NumTimes+k, tail[k], name+"_s")
		}
	}
	if cols[len(cols)-NumTimes-2] != "rejections" || cols[len(cols)-NumTimes-1] != "wasted_tokens" {
		t.Errorf("header %s lacks rejections,wasted_tokens before the times", RequestsCSVHeader)
	}
}

func checkMap(t *testing.T, name string, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %v, want %v", name, got, want)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-12 {
			t.Errorf("%s[%s] = %v, want %v", name, k, g, w)
		}
	}
}

func checkOwners(t *testing.T, got, want map[string]OwnerTime) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("owners %v, want %v", got, want)
	}
	for k, w := range want {
		g := got[k]
		if math.Abs(g.TTFTS-w.TTFTS) > 1e-12 || math.Abs(g.DecodeS-w.DecodeS) > 1e-12 ||
			math.Abs(g.TotalS-w.TotalS) > 1e-12 {
			t.Errorf("owner %s: %+v, want %+v", k, g, w)
		}
	}
}

func TestOwnerShares(t *testing.T) {
	ttft := func(o OwnerTime) float64 { return o.TTFTS }
	tests := []struct {
		owners map[string]OwnerTime
		want   string
	}{
		{nil, "-"},
		{map[string]OwnerTime{"a": {}, "b": {DecodeS: 1}}, "-"},
		// 0.999/1 rounds to 100%; 0.001 is shown, not as 0%.
		{map[string]OwnerTime{"b": {TTFTS: 0.001}, "a": {TTFTS: 0.999}}, "a 100%, b <1%"},
		// Equal shares in name order; zero shares left out.
		{map[string]OwnerTime{"z": {TTFTS: 1}, "y": {TTFTS: 1}, "x": {}}, "y 50%, z 50%"},
	}
	for _, tc := range tests {
		if got := ownerShares(tc.owners, ttft); got != tc.want {
			t.Errorf("ownerShares(%v) = %q, want %q", tc.owners, got, tc.want)
		}
	}
}

// TestWriteTableWaits: each side's causes as shares of its wait, largest
// first; a side that never waited is left out.
func TestWriteTableWaits(t *testing.T) {
	s := Summary{Waits: WaitSummary{
		PrefillS: map[string]float64{"busy": 1, "token_budget": 3, "max_num_seqs": 0, "kv_blocks": 0},
		DecodeS:  map[string]float64{"busy": 0, "max_num_seqs": 4, "kv_blocks": 1, "token_budget": 0}}}
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "  waited    prefill side: token_budget 75%, busy 25% of 4.00 s   decode side: max_num_seqs 80%, kv_blocks 20% of 5.00 s\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	s.Waits.PrefillS = map[string]float64{}
	b.Reset()
	WriteTable(&b, s)
	if strings.Contains(b.String(), "prefill side") {
		t.Errorf("a side with no wait is printed:\n%s", b.String())
	}
}
