package main

import (
	"strings"
	"testing"

	"handoff/hardware"
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
