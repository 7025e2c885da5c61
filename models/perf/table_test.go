package perf

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

const splitwiseFile = "../../scenarios/profiles/splitwise/perf_model.csv"

func readSplitwise(t testing.TB) []ProfileRow {
	t.Helper()
	data, err := os.ReadFile(splitwiseFile)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseSplitwise(bytes.NewReader(data), splitwiseFile)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParseSplitwiseFile(t *testing.T) {
	rows := readSplitwise(t)
	if len(rows) != 1260 {
		t.Fatalf("%d rows, want 1260", len(rows))
	}
	// First data row: llama2-70b,a100-80gb,512,1,128,...,196.2532191537321,54.87951193752838,...,2
	r := rows[0]
	want := ProfileRow{Model: "llama2-70b", Hardware: "a100-80gb", TP: 2, PromptSize: 512, BatchSize: 1,
		TokenSize: 128, PromptTimeMs: 196.2532191537321, TokenTimeMs: 54.87951193752838, Line: 2}
	if r != want {
		t.Errorf("row 0 = %+v\nwant   %+v", r, want)
	}
}

// TestProfileTableH100TP8 checks the table against averages of Splitwise's
// llama2-70b / h100-80gb / TP8 rows (mean of the repeats, ms):
//
//	prefill (batch 1): prompt 128 → 55.298427, 512 → 55.500073 (45 rows over
//	all token sizes), 1024 → 78.306267, 4096 → 378.647767, 8192 → 848.381994
//	prefill (prompt 512): batch 8 → 377.614504
//	decode (prompt 512): batch 1 → 30.495173, 4 → 31.795942, 8 → 32.426199;
//	decode (batch 1): prompt 4096 → 30.566471
func TestProfileTableH100TP8(t *testing.T) {
	tab, err := NewProfileTable(readSplitwise(t), "llama2-70b", "h100-80gb", 8)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"measured cell", tab.PrefillMs(1, 512), 55.500073},
		// midway between prompts 512 and 1024: (55.500073 + 78.306267)/2
		{"interpolated", tab.PrefillMs(1, 768), 66.903170},
		// unmeasured (8, 4096), filled from pivot (1, 512):
		// 377.614504·378.647767/55.500073 = 2576.264856
		{"filled cell", tab.PrefillMs(8, 4096), 2576.264856},
		// beyond prompt 8192, linear from the 4096-8192 segment:
		// 848.381994 + 2·(848.381994 − 378.647767) = 1787.850450
		{"extrapolated", tab.PrefillMs(1, 16384), 1787.850450},
		{"clamped below", tab.PrefillMs(1, 64), 55.298427},
		{"decode measured", tab.DecodeMs(4, 512), 31.795942},
		// 32.426199·30.566471/30.495173 = 32.502011
		{"decode filled", tab.DecodeMs(8, 4096), 32.502011},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-5 {
			t.Errorf("%s: %.6f ms, want %.6f", tc.name, tc.got, tc.want)
		}
	}
	// A mixed step is prefill + decode: 55.500073 + 31.795942 = 87.296015 ms.
	b := Batch{PrefillSeqs: 1, PrefillTokens: 512, DecodeSeqs: 4, DecodeContext: 2048}
	if got := float64(tab.StepNs(&b)) / 1e6; math.Abs(got-87.296015) > 1e-5 {
		t.Errorf("mixed step %.6f ms, want 87.296015", got)
	}
	if got := tab.StepNs(&Batch{}); got != 0 {
		t.Errorf("empty batch %d ns", got)
	}
	if n := testing.AllocsPerRun(100, func() { tab.StepNs(&b) }); n != 0 {
		t.Errorf("StepNs allocates %g times", n)
	}
}

func TestNewProfileTableErrors(t *testing.T) {
	rows := readSplitwise(t)
	_, err := NewProfileTable(rows, "llama2-70b", "h100-80gb", 3)
	if err == nil || !strings.Contains(err.Error(), "tp 3") || !strings.Contains(err.Error(), "llama2-70b/h100-80gb/tp8") {
		t.Errorf("err = %v", err)
	}
	// Two diagonal cells with no shared row or column cannot fill the grid.
	diag := []ProfileRow{
		{Model: "m", Hardware: "h", TP: 1, BatchSize: 1, PromptSize: 128, PromptTimeMs: 1, TokenTimeMs: 1},
		{Model: "m", Hardware: "h", TP: 1, BatchSize: 2, PromptSize: 256, PromptTimeMs: 2, TokenTimeMs: 2},
	}
	_, err = NewProfileTable(diag, "m", "h", 1)
	if err == nil || !strings.Contains(err.Error(), "batch 1 prompt 256") {
		t.Errorf("diagonal err = %v", err)
	}
}

func TestParseSplitwiseErrors(t *testing.T) {
	const header = "model,hardware,prompt_size,batch_size,token_size,prompt_time(ms),token_time,tensor_parallel\n"
	tests := []struct{ name, doc, want string }{
		{"missing column", "model,hardware\nx,y\n", `p.csv:1: header: missing column "prompt_size"`},
		{"bad int", header + "m,h,512,1,128,1.0,2.0,2\nm,h,abc,1,128,1.0,2.0,2\n", `p.csv:3: column prompt_size: "abc"`},
		{"zero batch", header + "m,h,512,0,128,1.0,2.0,2\n", "p.csv:2: column batch_size"},
		{"bad float", header + "m,h,512,1,128,x,2.0,2\n", "p.csv:2: column prompt_time"},
		{"negative", header + "m,h,512,1,128,1,-2.0,2\n", "p.csv:2: column token_time"},
		{"nan", header + "m,h,512,1,128,NaN,2,2\n", "p.csv:2: column prompt_time"},
		{"fields", header + "m,h,512,1\n", "p.csv:2: column"},
		{"empty", "", "p.csv:1: header"},
	}
	for _, tc := range tests {
		_, err := ParseSplitwise(strings.NewReader(tc.doc), "p.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseSplitwise(f *testing.F) {
	data, err := os.ReadFile(splitwiseFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:2000])
	f.Add([]byte("model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\nm,h,1,1,1,1,1,1\n"))
	f.Add([]byte("a,\"b\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		rows, err := ParseSplitwise(bytes.NewReader(doc), "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.BatchSize < 1 || r.PromptSize < 1 || r.TP < 1 || !(r.PromptTimeMs >= 0) || !(r.TokenTimeMs >= 0) {
				t.Fatalf("accepted bad row %+v", r)
			}
		}
		if len(rows) == 0 {
			return
		}
		r := rows[0]
		tab, err := NewProfileTable(rows, r.Model, r.Hardware, r.TP)
		if err != nil {
			if !strings.Contains(err.Error(), "grid cell") {
				t.Fatalf("table: %v", err)
			}
			return
		}
		b := Batch{PrefillSeqs: 3, PrefillTokens: 999, DecodeSeqs: 7, DecodeContext: 7000}
		if ns := tab.StepNs(&b); ns < 0 {
			t.Fatalf("negative step %d", ns)
		}
	})
}
