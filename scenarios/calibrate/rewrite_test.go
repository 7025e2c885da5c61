package calibrate

import (
	"os"
	"strings"
	"testing"
)

func TestRewriteEntry(t *testing.T) {
	data, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kv := []KeyValue{{"mfu", "0.61"}, {"decode_mfu", "0.2"}, {"step_per_seq", "12µs"},
		{"efficiency_source", Quote("fitted # 2026")}}
	got, err := RewriteEntry(data, "c.yaml", "accelerators", "gpu-a", "mbu", kv)
	if err != nil {
		t.Fatal(err)
	}
	got, err = RewriteEntry(got, "c.yaml", "links", "nvlink4", "", []KeyValue{{"latency", "2.5us"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"mfu: 0.5   # keep me", "mfu: 0.61   # keep me",
		"    mbu: 0.8\n", "    mbu: 0.8\n    decode_mfu: 0.2\n    step_per_seq: 12µs\n",
		`efficiency_source: "old # not a comment"`, `efficiency_source: "fitted # 2026"`,
		"latency: 1us", "latency: 2.5us").Replace(string(data))
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// gpu-b's fields are not gpu-a's: a key only gpu-b has is added to gpu-a.
	got, err = RewriteEntry(data, "c.yaml", "accelerators", "gpu-b", "mbu", []KeyValue{{"mbu", "0.7"}, {"mfu", "0.3"}})
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(string(data), "    mfu: 0.4\n    factors_from: gpu-a      # borrowed\n",
		"    mfu: 0.3\n    factors_from: gpu-a      # borrowed\n    mbu: 0.7\n", 1)
	if string(got) != want {
		t.Errorf("gpu-b: got\n%s\nwant\n%s", got, want)
	}
	if _, err := RewriteEntry(data, "c.yaml", "accelerators", "nope", "mbu", kv); err == nil ||
		!strings.Contains(err.Error(), `c.yaml: accelerators: no entry named "nope"`) {
		t.Errorf("missing entry: %v", err)
	}
}
