package main

import (
	"slices"
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
)

// catalogRow returns the listing's row whose first column is name, split
// into its tab-separated columns.
func catalogRow(t *testing.T, listing, name string) []string {
	t.Helper()
	for _, line := range strings.Split(listing, "\n") {
		cols := strings.Split(line, "\t")
		if cols[0] == name {
			return cols
		}
	}
	t.Fatalf("no row %s in\n%s", name, listing)
	return nil
}

// TestListHardwareDomain checks the scale-up domain column: devices per
// domain, "-" where the catalog bounds none.
func TestListHardwareDomain(t *testing.T) {
	var b strings.Builder
	listHardware(&b, hardware.Default())
	header := catalogRow(t, b.String(), "ACCELERATOR")
	col := func(name string) string {
		row := catalogRow(t, b.String(), name)
		for i, h := range header {
			if h == "DOMAIN" && i < len(row) {
				return row[i]
			}
		}
		t.Fatalf("no DOMAIN column in %q", header)
		return ""
	}
	for name, want := range map[string]string{"h100-sxm": "8", "trainium2": "16", "wse-3": "-", "groq-lpu": "-"} {
		if got := col(name); got != want {
			t.Errorf("%s domain %q, want %q", name, got, want)
		}
	}
}

// TestListModels checks the attention kind (MHA models are not "gqa"), the
// sliding-window layers and the precision columns.
func TestListModels(t *testing.T) {
	var b strings.Builder
	listModels(&b, llm.Default())
	header := catalogRow(t, b.String(), "MODEL")
	for name, want := range map[string]map[string]string{
		"llama-2-7b":   {"ATTENTION": "mha", "WEIGHT BITS": "16", "KV BITS": "16"},
		"llama-3.1-8b": {"ATTENTION": "gqa", "SLIDING": "-"},
		"deepseek-v3":  {"ATTENTION": "mla", "WEIGHT BITS": "8"},
		"gpt-oss-120b": {"WEIGHT BITS": "4.48", "SLIDING": "18 × 128"},
	} {
		row := catalogRow(t, b.String(), name)
		for col, v := range want {
			i := slices.Index(header, col)
			if i < 0 || i >= len(row) || row[i] != v {
				t.Errorf("%s %s: row %q, want %q", name, col, row, v)
			}
		}
	}
}
