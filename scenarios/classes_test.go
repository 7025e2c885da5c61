package scenarios

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim"
)

// classes is base's workload with two classes.
const classes = `    output_tokens: {dist: fixed, value: 10}
  classes:
    - {name: interactive, share: 0.3, priority: 0, slo: {ttft: 200ms, tpot: 20ms}}
    - {name: batch, share: 0.7, priority: 1, slo: {ttft: 5s, tpot: 100ms, attainment: 0.5}}
`

// TestClassesBadInput: each wrong class is one error naming its field.
func TestClassesBadInput(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"no SLO", "slo: {ttft: 5s, tpot: 100ms, attainment: 0.5}}", "}",
			"t.yaml:12: field workload.classes[1].slo: required: each class has its own SLO"},
		{"SLO without tpot", "slo: {ttft: 200ms, tpot: 20ms}", "slo: {ttft: 200ms}",
			"t.yaml:11: field workload.classes[0].slo: ttft and tpot are required"},
		{"shares", "share: 0.7", "share: 0.6", "t.yaml:10: field workload.classes: the classes' shares sum to 0.9, want 1"},
		{"share out of range", "share: 0.3", "share: 0", "t.yaml:11: field workload.classes[0].share: must be in (0, 1]"},
		{"duplicate name", "name: batch", "name: interactive",
			`t.yaml:12: field workload.classes[1].name: "interactive" names an earlier class too`},
		{"no name", "name: batch, ", "", "t.yaml:12: field workload.classes[1].name: required"},
		{"attainment", "attainment: 0.5", "attainment: 1.5", "t.yaml:12: field workload.classes[1].slo.attainment: must be in (0, 1]"},
	}
	doc := edit(t, "    output_tokens: {dist: fixed, value: 10}\n", classes)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := replaceOnce(t, doc, tt.old, tt.new)
			_, _, err := parseBuild(t, bad, "t.yaml")
			if err == nil {
				t.Fatalf("no error for\n%s", bad)
			}
			checkError(t, err, tt.want)
		})
	}
}

// TestSchedulingPolicyBadInput: an unknown policy, and priority on a
// wafer pool, are errors naming the field.
func TestSchedulingPolicyBadInput(t *testing.T) {
	_, _, err := parseBuild(t, edit(t, "{block_size: 16}", "{block_size: 16, scheduling_policy: prio}"), "t.yaml")
	if err == nil {
		t.Fatal("no error for an unknown scheduling policy")
	}
	checkError(t, err, `t.yaml:14: field pools[0].engine.scheduling_policy: unknown policy "prio" (known: fcfs, priority)`)
}

// TestClassesBuild: the classes reach the simulator (priorities), the
// summary (SLOs, the attainment defaulting to the scenario's) and the
// requests (each tagged, about in the shares asked), and the scheduling
// policy reaches the engine.
func TestClassesBuild(t *testing.T) {
	doc := edit(t, "    output_tokens: {dist: fixed, value: 10}\n", classes)
	doc = replaceOnce(t, doc, "requests: 10", "requests: 2000")
	doc = replaceOnce(t, doc, "{block_size: 16}", "{block_size: 16, scheduling_policy: priority}")
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p := b.Config.Priorities; len(p) != 2 || p[0] != 0 || p[1] != 1 {
		t.Errorf("priorities %v, want [0 1]", p)
	}
	if c := b.Classes; len(c) != 2 || c[0].Name != "interactive" || c[0].SLO.TTFTNs != 200e6 ||
		c[0].SLO.Attainment != 0.9 || c[1].SLO.Attainment != 0.5 {
		t.Errorf("classes %+v", c)
	}
	if got := b.Config.Instances[0].Engine.Scheduling; got != "priority" {
		t.Errorf("prefill engine's policy %q, want priority", got)
	}
	if got := b.Config.Instances[1].Engine.Scheduling; got != "" {
		t.Errorf("decode engine's policy %q, want fcfs (\"\")", got)
	}
	var n [2]int
	var r sim.Request
	for {
		ok, err := b.Config.Source.Next(&r)
		if err != nil || !ok {
			break
		}
		n[r.Class]++
	}
	if n[0] < 500 || n[0] > 700 || n[0]+n[1] != 2000 {
		t.Errorf("classes drawn %v of 2000, want about 600 interactive", n)
	}
}

// TestTwoClassesPriority runs the shipped two-class scenario under both
// policies: the priority policy raises the interactive class's attainment
// and lowers its TTFT p99, at the batch class's expense, on the same
// requests; each run repeats byte for byte.
func TestTwoClassesPriority(t *testing.T) {
	summarize := func(policy string) results.Summary {
		sets := []Set{{Path: "pools.prefill.engine.scheduling_policy", Value: policy},
			{Path: "pools.decode.engine.scheduling_policy", Value: policy}}
		l, err := Load("two-classes.yaml", sets...)
		res, b := runLoaded(t, l, err)
		return results.Summarize(res.Records, res.ITL, results.RunInfo{SLO: b.Config.SLO, Classes: b.Classes, GPUs: b.GPUs})
	}
	prio, fcfs := summarize("priority"), summarize("fcfs")
	if again := summarize("priority"); !reflect.DeepEqual(again, prio) {
		t.Error("two runs of the same seed differ")
	}
	pi, fi := prio.Classes[0], fcfs.Classes[0]
	if pi.Name != "interactive" || pi.Requests != fi.Requests || prio.Classes[1].Requests != fcfs.Classes[1].Requests {
		t.Fatalf("the classes' requests differ between the policies: %+v, %+v", prio.Classes, fcfs.Classes)
	}
	if !(pi.SLO.Attainment > fi.SLO.Attainment+0.15 && pi.TTFT.P99 < 0.6*fi.TTFT.P99) {
		t.Errorf("interactive under priority: attainment %.3f, TTFT p99 %.3f s; under fcfs %.3f, %.3f s: want a clear gain",
			pi.SLO.Attainment, pi.TTFT.P99, fi.SLO.Attainment, fi.TTFT.P99)
	}
	if !(prio.Classes[1].TTFT.P99 > fcfs.Classes[1].TTFT.P99) {
		t.Errorf("batch TTFT p99 %.3f s under priority, %.3f s under fcfs: want it to pay", prio.Classes[1].TTFT.P99,
			fcfs.Classes[1].TTFT.P99)
	}
}

// tracedClasses is base with a CSV trace whose cls column names each
// request's class (c0 or c1), and the two classes without shares.
func tracedClasses(t *testing.T) string {
	t.Helper()
	doc := edit(t, `  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 10/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}
`, `  trace: {format: csv, path: testdata/traces/mapped.csv, timestamp_unit: s,
    columns: {timestamp: t, input_tokens: in, output_tokens: out, class: cls}}
  classes:
    - {name: c0, priority: 0, slo: {ttft: 200ms, tpot: 20ms}}
    - {name: c1, priority: 1, slo: {ttft: 5s, tpot: 100ms}}
`)
	return doc
}

// TestTraceClasses: a trace's class column tags each request with the
// class its row names, in place of the shares' draw.
func TestTraceClasses(t *testing.T) {
	_, b, err := parseBuild(t, tracedClasses(t), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/traces/mapped.csv")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []uint8
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
		want = append(want, map[bool]uint8{true: 1, false: 0}[strings.HasSuffix(line, ",c1")])
	}
	var r sim.Request
	for {
		ok, err := b.Config.Source.Next(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, r.Class)
	}
	if !slices.Equal(got, want) {
		t.Errorf("classes %v, want the file's %v", got, want)
	}
}

// TestTraceClassesBadInput: a share beside a class column, a class column
// without classes, and a row naming no class are each one error naming
// the field (the file, line and column for the row).
func TestTraceClassesBadInput(t *testing.T) {
	doc := tracedClasses(t)
	_, _, err := parseBuild(t, replaceOnce(t, doc, "{name: c1, ", "{name: c1, share: 0.5, "), "t.yaml")
	if err == nil {
		t.Fatal("no error for a share beside a class column")
	}
	checkError(t, err, "t.yaml:9: field workload.classes[1].share: must be left out: the trace's class column")
	noClasses := doc[:strings.Index(doc, "  classes:")] + doc[strings.Index(doc, "pools:"):]
	if _, _, err = parseBuild(t, noClasses, "t.yaml"); err == nil {
		t.Fatal("no error for a class column without classes")
	}
	checkError(t, err, "field workload.trace.columns.class: needs workload.classes")
	_, b, err := parseBuild(t, replaceOnce(t, doc, "{name: c1, ", "{name: other, "), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r sim.Request
	for ok := true; ok && err == nil; {
		ok, err = b.Config.Source.Next(&r)
	}
	if err == nil {
		t.Fatal("no error for a row naming no class")
	}
	checkError(t, err, `mapped.csv:3: cls: "c1" is not a class of workload.classes (c0, other)`)
}
