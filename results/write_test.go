package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Summarize(handRecords(), handITL(), handInfo())); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "summary.golden.json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results -run Golden -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("summary.json differs from %s (rerun with -update if intended):\n%s", path, buf.String())
	}
}

func TestWriteJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Summarize(nil, &Histogram{}, RunInfo{WallTimeS: 0})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"NaN", "Inf", "null"} {
		if strings.Contains(out, bad) {
			t.Errorf("empty summary contains %s:\n%s", bad, out)
		}
	}
	if !strings.HasSuffix(out, "}\n") {
		t.Errorf("no trailing newline: %q", out[len(out)-3:])
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"scenario", "seed", "requests", "drop_reasons", "ttft_s", "tpot_s",
		"itl_s", "e2e_s", "throughput", "slo", "preemptions", "sim_time_s", "wall_time_s", "events",
		"prefix_cache_hit_rate", "preemption", "attribution", "instances"} {
		if _, ok := back[key]; !ok {
			t.Errorf("key %q missing", key)
		}
	}
}

func TestWriteRequestsCSV(t *testing.T) {
	recs := handRecords()
	recs[3].Reason = `cache "hit", low`
	recs[0].Waits[WaitKV] = 15 * ms
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs, InstanceNames(handInfo().Instances), false, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	noWaits := strings.Repeat(",0.000000", NumWaits)
	zeros := strings.Repeat("0.000000,", NumTimes-1) + "0.000000" + noWaits
	want := []string{
		RequestsCSVHeader,
		// TTFT 0.1 s, TPOT 1 s / 20 = 0.05 s, E2E 1.1 s.
		"0,0.000000,prefill-0,decode-0,100,21,50,0.100000,0.050000,1.100000,0,completed,,0,0," +
			"0.000000,0.000000,0.020000,0.050000,0.000000,0.010000,0.020000,1.000000,0.000000,0.000000,0.000000,0.000000,0.000000" +
			",0.000000,0.000000,0.015000,0.000000", // 15 ms waiting for KV blocks
		// One token: no TPOT.
		"1,1.000000,prefill-0,decode-0,200,1,0,0.300000,,0.300000,0,completed,,0,0," +
			"0.000000,0.005000,0.200000,0.075000,0.000000,0.010000,0.010000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000" + noWaits,
		"2,2.000000,prefill-0,decode-0,100,1,50,0.050000,,0.050000,0,completed,,0,0," +
			"0.000000,0.000000,0.000000,0.030000,0.000000,0.010000,0.010000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000" + noWaits,
		// Rejected before any token: no TTFT; reason quoted per RFC 4180.
		`3,3.000000,prefill-0,decode-0,300,0,0,,,0.500000,1,rejected,"cache ""hit"", low",0,0,` + zeros,
		// Dropped, never routed: empty instances.
		"4,4.000000,,,5000,0,0,,,0.000000,0,dropped,too long,0,0," + zeros,
		// One rejection that wasted 4 tokens; its components sum to 0.1 | 2.0 s.
		"5,2.500000,prefill-0,decode-0,100,11,0,0.100000,0.200000,2.100000,2,completed,,1,4," +
			"0.000000,0.000000,0.000000,0.060000,0.000000,0.020000,0.020000,1.200000,0.100000,0.300000,0.000000,0.400000,0.000000" + noWaits,
		"",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
}

func TestWriteRequestsCSVMissingName(t *testing.T) {
	var buf bytes.Buffer
	recs := []Record{{PrefillInstance: 3, DecodeInstance: -1, Status: Dropped}}
	if err := WriteRequestsCSV(&buf, recs, nil, false, nil); err != nil {
		t.Fatal(err)
	}
	if line := strings.Split(buf.String(), "\n")[1]; !strings.HasPrefix(line, "0,0.000000,3,,") {
		t.Errorf("row %q, want instance index 3 written as a number", line)
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, Summarize(handRecords(), handITL(), handInfo())); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"scenario    hand   seed 7   4 GPUs",
		"completed 4   rejected 1   dropped 1\n  rejected  1 like request 3: low cache hit\n  dropped   1 like request 4: too long\n",
		"latency           mean        p50        p90        p99        max",
		"  TTFT ms      137.500    100.000    240.000    294.000    300.000",
		"  E2E s          0.887      0.700      1.800      2.070      2.100",
		"TTFT ≤ 200 ms, TPOT ≤ 50 ms: attainment 33.3% (target 90%: missed), request goodput 0.43 req/s (0.109 per GPU)",
		"prefix hit rate 20.0%",
		// Means over the 4 completed requests; see handRecords.
		"  TTFT ms   router_queue 1.250   prefill_queue 55.000   prefill_compute 53.750   transfer 12.500" +
			"   decode_queue_first 15.000\n",
		"  decode s  decode_compute 0.550   decode_queue 0.025   reprefill 0.075   rejection 0.100\n",
		// TTFT 108.75/137.5, 15/137.5, 13.75/137.5; decode 650/750, 100/750.
		"  by owner  TTFT: acme 79%, decode 11%, nobody 10%   decode: decode 87%, nobody 13%\n",
		"preemption  3 preemptions   1200 re-prefill tokens   decoder prefill 12.5%   " +
			"cascades 1 (longest 2, 0.25 s)   lock-ups 2 (1.15 s)   rejections 1 (4 tokens wasted)\n",
		"lock-ups    preemption_loop 1 (0.75 s, most on decode-0)   pinned 1 (0.40 s, most on prefill-0)" +
			"   prefill-0 pinned → decode-0 preemption_loop: 1 (0.40 s, longest 0.40 s from 1.500 s)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + out)
	}
}

func TestWriteTableEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, Summarize(nil, nil, RunInfo{})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "TTFT ≤ ∞, TPOT ≤ ∞") || strings.Contains(out, "NaN") ||
		!strings.Contains(out, "  by owner  TTFT: -   decode: -\n") || strings.Contains(out, "preemption ") {
		t.Errorf("empty table:\n%s", out)
	}
}

func BenchmarkWriteRequestsCSV(b *testing.B) {
	recs := randomRecords(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := WriteRequestsCSV(io.Discard, recs, nil, false, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  string
	}{
		{1, "100.0%"}, {0, "0.0%"}, {0.9, "90.0%"}, {0.39216, "39.2%"},
		{1 - 2.0/19366, "99.99%"}, {0.99999, "99.999%"}, {1e-5, "0.001%"}, {1 - 1e-12, ">99.999999%"}, {1e-12, "<0.000001%"},
	} {
		if got := Percent(tc.share); got != tc.want {
			t.Errorf("Percent(%v) = %s, want %s", tc.share, got, tc.want)
		}
	}
	for share, want := range map[float64]string{0.9: "90%", 0.995: "99.5%", 1: "100%", 0.1234567: "12.34567%"} {
		if got := targetPercent(share); got != want {
			t.Errorf("targetPercent(%v) = %s, want %s", share, got, want)
		}
	}
}

// TestWriteTableShowsAMiss: 2 misses in 19,366 requests do not read 100%.
func TestWriteTableShowsAMiss(t *testing.T) {
	recs := make([]Record, 19366)
	for i := range recs {
		recs[i] = Record{ID: int64(i), ArrivalNs: int64(i) * 1e6, FirstTokenNs: int64(i)*1e6 + 1e6, FinishNs: int64(i)*1e6 + 2e6,
			OutputTokens: 2, Status: Completed}
	}
	recs[5].FirstTokenNs += 1e9 // TTFT over the limit
	recs[9].Status, recs[9].Reason = Dropped, "too long"
	var buf bytes.Buffer
	if err := WriteTable(&buf, Summarize(recs, nil, RunInfo{SLO: SLO{TTFTNs: 5e8, Attainment: 0.9995}})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "attainment 99.99% (target 99.95%: met)") {
		t.Errorf("SLO line does not show the two misses:\n%s", buf.String())
	}
}

// TestWriteRequestsCSVSessions: session and turn columns follow the others
// when a record has a turn, empty on a record outside any session; the
// header and the lines without sessions are unchanged otherwise.
func TestWriteRequestsCSVSessions(t *testing.T) {
	recs := handRecords()[:2]
	recs[1].Session, recs[1].Turn = 7, 3
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs, InstanceNames(handInfo().Instances), false, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if lines[0] != RequestsCSVHeader+",session,turn" {
		t.Fatalf("header %s", lines[0])
	}
	if !strings.HasSuffix(lines[1], ",0.000000,,") || !strings.HasSuffix(lines[2], ",0.000000,7,3") {
		t.Errorf("lines\n%s\n%s\nwant ,, and ,7,3 at their ends", lines[1], lines[2])
	}
	if n, m := strings.Count(lines[0], ","), strings.Count(lines[1], ","); n != m {
		t.Errorf("header has %d commas, a line %d", n, m)
	}
}

// TestWriteRequestsCSVClasses: with classes, a class column names each
// request's class, last; without, the lines are as they were.
func TestWriteRequestsCSVClasses(t *testing.T) {
	recs := handRecords()[:2]
	recs[1].Class = 1
	var plain, classed bytes.Buffer
	names := InstanceNames(handInfo().Instances)
	if err := WriteRequestsCSV(&plain, recs, names, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteRequestsCSV(&classed, recs, names, false, []string{"interactive", "batch"}); err != nil {
		t.Fatal(err)
	}
	want := strings.Split(plain.String(), "\n")
	got := strings.Split(classed.String(), "\n")
	for i, suffix := range []string{",class", ",interactive", ",batch"} {
		if got[i] != want[i]+suffix {
			t.Errorf("line %d: %s\nwant %s%s", i, got[i], want[i], suffix)
		}
	}
}

// TestRecordSize: the session fields live in the padding after Status,
// and the class takes 8 bytes more, so a record is 248 bytes
// (docs/PERFORMANCE.md's figure per retained record).
func TestRecordSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the figure is for 64-bit platforms")
	}
	if n := unsafe.Sizeof(Record{}); n != 248 {
		t.Errorf("Record is %d bytes, want 248", n)
	}
}
