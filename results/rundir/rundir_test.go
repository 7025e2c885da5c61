package rundir_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"handoff/results"
	"handoff/results/rundir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
)

// smallRun simulates the multi-datacenter example (it has links) with 40
// requests and writes its run directory.
func smallRun(t *testing.T) (string, *experiment.Finished) {
	t.Helper()
	set, err := scenarios.ParseSet("workload.synthetic.requests=40")
	if err != nil {
		t.Fatal(err)
	}
	l, err := scenarios.Load("../../scenarios/multi-dc.yaml", set)
	if err != nil {
		t.Fatal(err)
	}
	sum, res, err := experiment.Run(l, nil, experiment.WithTimeline, experiment.KeepRecords)
	if err != nil {
		t.Fatal(err)
	}
	run := &experiment.Finished{Loaded: l, Summary: sum, Result: res}
	dir := t.TempDir()
	if err := experiment.WriteRunDir(dir, run); err != nil {
		t.Fatal(err)
	}
	return dir, run
}

// TestRoundTrip: what WriteRunDir wrote reads back as the run's rows, to
// each file's precision.
func TestRoundTrip(t *testing.T) {
	dir, run := smallRun(t)
	res := run.Result
	close := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

	tls, err := rundir.ReadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tls) != len(res.Timelines) {
		t.Fatalf("%d timelines read, %d written", len(tls), len(res.Timelines))
	}
	for i, tl := range res.Timelines {
		got := tls[i]
		if got.Instance != tl.Instance || got.Pool != tl.Pool || got.MaxSeqs != tl.MaxSeqs || len(got.Samples) != len(tl.Samples) {
			t.Fatalf("timeline %d: read %s/%s/%d with %d samples, wrote %s/%s/%d with %d", i, got.Instance, got.Pool,
				got.MaxSeqs, len(got.Samples), tl.Instance, tl.Pool, tl.MaxSeqs, len(tl.Samples))
		}
		for k, s := range tl.Samples {
			g := got.Samples[k]
			if g.AtNs != s.AtNs || !close(g.KVUsed, s.KVUsed, 5e-5) || g.Running != s.Running || g.Waiting != s.Waiting ||
				g.Preemptions != s.Preemptions || g.Lockup != s.Lockup.String() {
				t.Fatalf("%s sample %d: read %+v, wrote %+v", tl.Instance, k, g, s)
			}
		}
	}

	links, err := rundir.ReadLinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) == 0 || len(links) != len(res.Links) {
		t.Fatalf("%d links read, %d written", len(links), len(res.Links))
	}
	for i, l := range res.Links {
		g := links[i]
		if g.Name != l.Name || g.Bytes != math.Round(l.Stats.Bytes) || g.Transfers != l.Stats.Transfers ||
			!close(float64(g.BusyNs), float64(l.Stats.BusyNs), 500) {
			t.Errorf("link %d: read %+v, wrote %+v", i, g, l)
		}
	}

	names := experiment.InstanceNames(res)
	var n int
	err = rundir.ReadRequests(dir, func(r *rundir.Request) {
		rec := &res.Records[n]
		n++
		if r.ID != rec.ID || r.Status != rec.Status.String() || r.InputTokens != int64(rec.PromptTokens) ||
			r.OutputTokens != int64(rec.OutputTokens) || r.DecodeInstance != names[rec.DecodeInstance] ||
			!close(r.TTFTS, float64(rec.FirstTokenNs-rec.ArrivalNs)/1e9, 1e-6) {
			t.Errorf("request %d: read %+v", rec.ID, *r)
		}
	})
	if err != nil || n != len(res.Records) {
		t.Errorf("%d requests read (%v), %d written", n, err, len(res.Records))
	}
	sum, err := rundir.ReadSummary(dir)
	if err != nil || sum.Requests.Total != 40 {
		t.Errorf("summary: %v, %d requests", err, sum.Requests.Total)
	}
}

// TestMalformed: a bad value is an error naming the file, the line and
// the column.
func TestMalformed(t *testing.T) {
	tests := []struct {
		file, body, want string
	}{
		{results.TimelineFile, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool\n" +
			"sample,d-0,0.000,0.1,1,0,0,8,d\nsample,d-0,0.500,lots,1,0,0,8,d\n", "timeline.csv:3: column kv_used: not a number"},
		{results.TimelineFile, "kind,instance,time_s,kv_used,running,waiting\nsample,d-0,0.000\n", "timeline.csv:2: 3 fields"},
		{results.TimelineFile, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,lockup\n" +
			"sample,d-0,0.000,0.1,1,0,0,8,d,stuck\n", `timeline.csv:2: column lockup: "stuck" is no lock-up kind`},
		{results.LinksFile, "link,bytes,transfers,busy_s,busy_share\na,1,2,x,0.1\n", "links.csv:2: column busy_s: not a number"},
		{results.LinksFile, "link,bytes,busy_s,busy_share\n", "links.csv:1: no transfers column"},
		{results.FleetFile, "time_s,pool,ready,requested,draining\n0,d,1,0,0\n1,d,two,0,0\n", "fleet.csv:3: column ready: not an integer"},
		{results.FleetFile, "time_s,pool,ready,requested,draining\n1,d,1,0,0\n0.5,d,2,0,0\n", "fleet.csv:3: column time_s"},
		{results.FleetFile, "", "fleet.csv: header: empty file"},
		{results.RequestsFile, results.RequestsCSVHeader + "\n" + "0,0.1,p-0,d-0,10,5,0,0.2,,0.5,0,completed,,0,0" +
			strings.Repeat(",0", 17) + "\n1,x" + "\n", "requests.csv:3: 2 fields"},
		{results.RequestsFile, results.RequestsCSVHeader + "\n" + "0,0.1,p-0,d-0,10,5,0,fast,,0.5,0,completed,,0,0" +
			strings.Repeat(",0", 17) + "\n", "requests.csv:2: column ttft_s: not a number"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		switch tt.file {
		case results.TimelineFile:
			_, err = rundir.ReadTimeline(dir)
		case results.LinksFile:
			_, err = rundir.ReadLinks(dir)
		case results.FleetFile:
			_, err = rundir.ReadFleet(dir)
		case results.RequestsFile:
			err = rundir.ReadRequests(dir, func(*rundir.Request) {})
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s %q: got %v, want an error naming the file and %q", tt.file, tt.body, err, tt.want)
		}
	}
}

// TestTimelineLockupColumn: the lockup column, written after pool and
// before the tier columns, reads back; a file from before it reads its
// tier columns where they were.
func TestTimelineLockupColumn(t *testing.T) {
	tl := rundir.Timeline{Instance: "p-0", Pool: "p", MaxSeqs: 8, Samples: []rundir.Sample{
		{AtNs: 0, KVUsed: 0.5, Running: 1, TierUsed: [rundir.NumTiers]float32{0.25}},
		{AtNs: 5e8, KVUsed: 1, Waiting: 3, Lockup: "pinned", TierUsed: [rundir.NumTiers]float32{0.5}}}}
	dir := t.TempDir()
	var b bytes.Buffer
	if err := rundir.WriteTimeline(&b, slices.Values([]rundir.Timeline{tl}), true); err != nil {
		t.Fatal(err)
	}
	want := "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,lockup,host_used,disk_used,store_used\n" +
		"sample,p-0,0.000,0.5000,1,0,0,8,p,,0.2500,0.0000,0.0000\nsample,p-0,0.500,1.0000,0,3,0,8,p,pinned,0.5000,0.0000,0.0000\n"
	if b.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	old := "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,host_used,disk_used,store_used\n" +
		"sample,p-0,0.000,0.5000,1,0,0,8,p,0.2500,0.0000,0.0000\nsample,p-0,0.500,1.0000,0,3,0,8,p,0.5000,0.0000,0.0000\n"
	for _, body := range []string{b.String(), old} {
		if err := os.WriteFile(filepath.Join(dir, results.TimelineFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		tls, err := rundir.ReadTimeline(dir)
		if err != nil {
			t.Fatal(err)
		}
		read := tl
		if body == old {
			read.Samples = slices.Clone(tl.Samples)
			read.Samples[1].Lockup = ""
		}
		if !reflect.DeepEqual(tls, []rundir.Timeline{read}) {
			t.Errorf("read %+v\nwant %+v", tls, read)
		}
	}
}

// TestOldTimeline: a timeline.csv written before the preemptions column
// marks each "preemption" row.
func TestOldTimeline(t *testing.T) {
	dir := t.TempDir()
	body := "kind,instance,time_s,kv_used,running,waiting\nsample,d-0,0.000,0.5,2,1\npreemption,d-0,0.250,,,\nsample,d-0,0.500,0.6,2,0\n"
	if err := os.WriteFile(filepath.Join(dir, results.TimelineFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tls, err := rundir.ReadTimeline(dir)
	if err != nil || len(tls) != 1 || len(tls[0].Samples) != 2 || len(tls[0].MarksNs) != 1 || tls[0].MarksNs[0] != 250e6 {
		t.Errorf("read %+v, %v; want 2 samples and a preemption at 0.25 s", tls, err)
	}
}
