package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"handoff/results"
	"handoff/scenarios"
)

// streamCases are shipped scenarios of each kind whose records take a
// different path: P/D over a trace, a decoder crash with fail-overs (a
// changing fleet), sessions (their session columns), lower KV tiers and
// a shared store (their tier columns), two traffic classes (their class
// column), cut to a few thousand requests.
var streamCases = []struct {
	file string
	sets []string
}{
	{"azure-conv-pd.yaml", nil},
	{"decoder-failure.yaml", nil},
	{"multi-turn.yaml", nil},
	{"mooncake-store.yaml", []string{"workload.trace.limit=3000"}},
	{"quickstart.yaml", []string{"workload.synthetic.requests=500"}},
	{"two-classes.yaml", []string{"workload.synthetic.requests=300"}},
}

// TestStreamedRunMatchesKept is the metamorphic check of streaming: a run
// that keeps every record (Summarize, requests.csv written from them
// afterwards) and the same run streaming them (the Summarizer, the rows
// written as requests end, the records never all held) give the same
// summary.json and requests.csv, byte for byte, and report the same
// unserved requests and SLO limit shares.
func TestStreamedRunMatchesKept(t *testing.T) {
	for _, c := range streamCases {
		t.Run(c.file, func(t *testing.T) {
			l := loadShipped(t, c.file, c.sets)
			kept, keptRun := runDir(t, l, true)
			streamed, streamedRun := runDir(t, l, false)
			if streamedRun.Result.Records != nil || keptRun.Result.Records == nil {
				t.Fatalf("records kept: %d streaming, %d keeping", len(streamedRun.Result.Records), len(keptRun.Result.Records))
			}
			for _, name := range []string{results.SummaryFile, results.RequestsFile} {
				a, b := readFile(t, kept, name), readFile(t, streamed, name)
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs: %d bytes keeping the records, %d streaming them", name, len(a), len(b))
				}
			}
			header, _, _ := bytes.Cut(readFile(t, streamed, results.RequestsFile), []byte("\n"))
			if classed := bytes.HasSuffix(header, []byte(results.ClassColumn)); classed != (len(l.Workload.Classes) > 0) {
				t.Errorf("requests.csv's header %s: a class column %v, the workload's classes %d", header, classed, len(l.Workload.Classes))
			}
			if a, b := errText(keptRun.Unserved()), errText(streamedRun.Unserved()); a != b {
				t.Errorf("unserved: keeping %q, streaming %q", a, b)
			}
			s := results.SLO{TTFTNs: int64(l.SLO.TTFT), TPOTNs: int64(l.SLO.TPOT)}
			at, ap := LimitShares(keptRun.Result, s)
			bt, bp := LimitShares(streamedRun.Result, s)
			if at != bt || ap != bp {
				t.Errorf("limit shares: keeping %g, %g; streaming %g, %g", at, ap, bt, bp)
			}
		})
	}
}

// loadShipped loads a shipped scenario with sets applied.
func loadShipped(t *testing.T, file string, raw []string) *scenarios.Loaded {
	t.Helper()
	l, err := Load(filepath.Join("..", file), raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runDir runs l and writes its directory as `handoff run -o` does, keeping
// the records or streaming them, with the wall time zeroed.
func runDir(t *testing.T, l *scenarios.Loaded, keep bool) (string, *Finished) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	d, err := CreateRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	configure := d.Attach
	if keep {
		configure = KeepRecords
	}
	sum, res, err := Run(l, nil, WithTimeline, configure)
	if err != nil {
		t.Fatal(err)
	}
	sum.WallTimeS = 0
	run := &Finished{Loaded: l, Summary: sum, Result: res}
	if err := d.Write(run); err != nil {
		t.Fatal(err)
	}
	return dir, run
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRunDirClosedUnwritten: a run directory whose run never finished
// (Close before Write) leaves no temporary requests.csv, and no directory
// when it made it.
func TestRunDirClosedUnwritten(t *testing.T) {
	existing := t.TempDir()
	made := filepath.Join(t.TempDir(), "new")
	for _, dir := range []string{existing, made} {
		d, err := CreateRunDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	if names, err := os.ReadDir(existing); err != nil || len(names) != 0 {
		t.Errorf("an existing directory keeps %v (%v), want it empty", names, err)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("the directory CreateRunDir made is still there: %v", err)
	}
}
