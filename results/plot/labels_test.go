package plot

import (
	"slices"
	"strings"
	"testing"
)

func TestVaryingColumns(t *testing.T) {
	rows := [][]string{{"h200", "90", "1", "2"}, {"h200", "90", "1", "4"}, {"b200", "90", "2", "4"}}
	tests := []struct {
		rows [][]string
		skip []int
		want []int
	}{
		{rows, nil, []int{0, 2, 3}}, // the rate column (1) holds 90 in every row
		{rows, []int{0}, []int{2, 3}},
		{rows[:1], nil, nil}, // one row: nothing varies
		{nil, nil, nil},
	}
	for _, tt := range tests {
		if got := varyingColumns(tt.rows, tt.skip...); !slices.Equal(got, tt.want) {
			t.Errorf("varyingColumns(%v, skip %v) = %v, want %v", tt.rows, tt.skip, got, tt.want)
		}
	}
}

func TestRowLabels(t *testing.T) {
	short := []string{"prefill_load_scale", "overlap_score_credit", "rate_scale"}
	rows := [][]string{{"1", "0", "2"}, {"4", "1", "2"}}
	// Both columns: "prefill_load_scale=1, overlap_score_credit=0" is 44
	// runes, over maxNameRunes (40): values under a header.
	labels, header := rowLabels(short, rows, []int{0, 1})
	if want := []string{"1, 0", "4, 1"}; !slices.Equal(labels, want) || header != "prefill_load_scale, overlap_score_credit" {
		t.Errorf("long: got %q under %q, want %q under the column names", labels, header, want)
	}
	// One column fits: keyed labels, no header.
	labels, header = rowLabels(short, rows, []int{1})
	if want := []string{"overlap_score_credit=0", "overlap_score_credit=1"}; !slices.Equal(labels, want) || header != "" {
		t.Errorf("short: got %q under %q, want %q and no header", labels, header, want)
	}
	labels, header = rowLabels(short, rows, nil)
	if !slices.Equal(labels, []string{"", ""}) || header != "" {
		t.Errorf("no columns: got %q under %q, want empty labels", labels, header)
	}
	long := []string{strings.Repeat("x", 50), strings.Repeat("y", 50)}
	if _, header = rowLabels(long, [][]string{{"1", "2"}}, []int{0, 1}); len([]rune(header)) != maxHeaderRunes ||
		!strings.HasSuffix(header, "…") {
		t.Errorf("header of 102 runes: got %q, want it cut to %d runes with an ellipsis", header, maxHeaderRunes)
	}
}

func TestStyleIndices(t *testing.T) {
	// hardware × (P, D): the colour follows the hardware, the variant the
	// (P, D) pair, each numbered in order of first appearance.
	rows := [][]string{
		{"h100", "30", "1", "2"}, {"h100", "30", "1", "4"}, {"h100", "60", "1", "2"},
		{"b200", "30", "2", "4"}, {"b200", "30", "1", "2"},
	}
	hue, variant := styleIndices(rows, []int{0, 2, 3})
	if want := []int{0, 0, 0, 1, 1}; !slices.Equal(hue, want) {
		t.Errorf("hue = %v, want %v", hue, want)
	}
	if want := []int{0, 1, 0, 2, 0}; !slices.Equal(variant, want) {
		t.Errorf("variant = %v, want %v", variant, want)
	}
	if hue, variant := styleIndices(rows, []int{0}); hue != nil || variant != nil {
		t.Errorf("one column: got %v %v, want nil (a colour per curve)", hue, variant)
	}
}

// TestSweepCurvesGrid: a column that never changes names no curve; two
// that do, too long to name in full, give values under a legend title,
// coloured by the first.
func TestSweepCurvesGrid(t *testing.T) {
	tab := &sweepTable{path: "results.csv",
		varied: []string{"model", "router.dynamo.prefill_load_scale", "router.dynamo.overlap_score_credit", "workload.rate_scale"},
		values: [][]string{{"m", "1", "0", "2"}, {"m", "1", "0", "3"}, {"m", "1", "4", "2"}, {"m", "4", "0", "2"}},
		lines:  []int{2, 3, 4, 5}, attainment: []float64{1, 0.5, 1, 1}, requestGoodputRPS: []float64{2, 1.5, 2, 2}}
	curves, err := sweepCurves(tab, 3)
	if err != nil {
		t.Fatal(err)
	}
	type look struct {
		name         string
		hue, variant int
		points       int
	}
	var got []look
	for _, c := range curves {
		got = append(got, look{c.Name, c.Hue, c.Variant, len(c.Points)})
		if c.LegendTitle != "prefill_load_scale, overlap_score_credit" {
			t.Errorf("curve %q: legend title %q", c.Name, c.LegendTitle)
		}
	}
	want := []look{{"1, 0", 0, 0, 2}, {"1, 4", 0, 1, 1}, {"4, 0", 1, 0, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("curves %+v, want %+v", got, want)
	}
}
