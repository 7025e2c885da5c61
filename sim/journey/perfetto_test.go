package journey

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"handoff/sim"
)

// TestLoadsInPerfetto loads a journey trace into Perfetto's trace
// processor — the trace_processor_shell binary, or the perfetto Python
// package's TraceProcessor — and checks that it keeps every slice and
// every flow (Perfetto drops a flow it cannot bind to a slice). It is
// skipped when neither can be found.
func TestLoadsInPerfetto(t *testing.T) {
	var reqs []sim.Request
	for i := range 30 {
		reqs = append(reqs, sim.Request{ArrivalNs: int64(i) * 3000, PromptTokens: 50 + 37*(i%7), OutputTokens: 20 + i%13})
	}
	data := traceRun(t, pdConfig(t, 2, 2, 40, reqs), 10)
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	slices, flows := bytes.Count(data, []byte(`"ph":"X"`)), bytes.Count(data, []byte(`"ph":"s"`))
	query := "select (select count(*) from slice), (select count(*) from flow);"
	out, err := perfettoQuery(t, path, query)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.FieldsFunc(out, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '"' })
	var got []int
	for _, f := range fields {
		if n, err := strconv.Atoi(f); err == nil {
			got = append(got, n)
		}
	}
	if len(got) < 2 || got[len(got)-2] != slices || got[len(got)-1] != flows {
		t.Errorf("Perfetto kept %v slices and flows, want %d and %d:\n%s", got, slices, flows, out)
	}
}

// perfettoQuery runs an SQL query on a trace with Perfetto's trace
// processor, skipping the test when none is installed.
func perfettoQuery(t *testing.T, trace, query string) (string, error) {
	for _, bin := range []string{"trace_processor_shell", "trace_processor"} {
		if p, err := exec.LookPath(bin); err == nil {
			q := filepath.Join(t.TempDir(), "q.sql")
			if err := os.WriteFile(q, []byte(query), 0o644); err != nil {
				return "", err
			}
			out, err := exec.Command(p, "-q", q, trace).CombinedOutput()
			return string(out), err
		}
	}
	py := "from perfetto.trace_processor import TraceProcessor\n" +
		"tp = TraceProcessor(trace=" + strconv.Quote(trace) + ")\n" +
		"row = next(iter(tp.query(" + strconv.Quote(query) + ")))\n" +
		"print(*[getattr(row, c) for c in row.__dict__ if not c.startswith('_')])\n"
	if exec.Command("python3", "-c", "import perfetto.trace_processor").Run() != nil {
		t.Skip("Perfetto's trace processor is not installed (trace_processor_shell on PATH, or pip install perfetto)")
	}
	out, err := exec.Command("python3", "-c", py).CombinedOutput()
	if err != nil { // the package fetches its trace processor on first use: offline, it cannot
		t.Skipf("the perfetto package could not start its trace processor: %.300s", out)
	}
	return string(out), nil
}
