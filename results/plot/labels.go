package plot

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// maxHeaderRunes bounds a legend's or an axis's header line naming the
// columns that the labels under it list; longer ones are cut.
const maxHeaderRunes = 64

// varyingColumns returns, in order, the columns of rows (each a list of
// cell values) whose value is not the same in every row, leaving out the
// columns at skip. A column that never changes says nothing about which
// row a label names. O(rows × columns).
func varyingColumns(rows [][]string, skip ...int) []int {
	if len(rows) == 0 {
		return nil
	}
	var cols []int
	for j := range rows[0] {
		if slices.Contains(skip, j) {
			continue
		}
		for _, r := range rows[1:] {
			if r[j] != rows[0][j] {
				cols = append(cols, j)
				break
			}
		}
	}
	return cols
}

// rowLabels names each row by its values in cols. When every
// "name=value, …" label fits in maxNameRunes runes it returns those and
// an empty header; else it returns the values alone ("4, h200") and a
// header naming the columns once ("decode.count, decode.hardware"), so
// that no label loses the values that tell it apart. short holds the
// columns' display names. No cols: every label is empty.
func rowLabels(short []string, rows [][]string, cols []int) (labels []string, header string) {
	labels = make([]string, len(rows))
	fits := true
	for i, r := range rows {
		parts := make([]string, len(cols))
		for k, j := range cols {
			parts[k] = short[j] + "=" + r[j]
		}
		labels[i] = strings.Join(parts, ", ")
		fits = fits && utf8.RuneCountInString(labels[i]) <= maxNameRunes
	}
	if fits {
		return labels, ""
	}
	names := make([]string, len(cols))
	for k, j := range cols {
		names[k] = short[j]
	}
	for i, r := range rows {
		vals := make([]string, len(cols))
		for k, j := range cols {
			vals[k] = r[j]
		}
		labels[i] = strings.Join(vals, ", ")
	}
	return labels, cut(strings.Join(names, ", "), maxHeaderRunes)
}

// cut shortens s to n runes, ending it with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// styleIndices returns, per row, the colour and the dash-and-marker
// variant of its line when cols (the columns that tell the curves apart)
// form a grid of two or more: the colour follows the first column's
// value, the variant the combination of the others, each numbered in
// order of first appearance. With fewer than two columns it returns nil:
// every curve gets its own colour. O(rows × columns).
func styleIndices(rows [][]string, cols []int) (hue, variant []int) {
	if len(cols) < 2 {
		return nil, nil
	}
	hues, variants := map[string]int{}, map[string]int{}
	number := func(m map[string]int, key string) int {
		if n, ok := m[key]; ok {
			return n
		}
		m[key] = len(m)
		return m[key]
	}
	for _, r := range rows {
		rest := make([]string, len(cols)-1)
		for k, j := range cols[1:] {
			rest[k] = r[j]
		}
		hue = append(hue, number(hues, r[cols[0]]))
		variant = append(variant, number(variants, strings.Join(rest, "\x00")))
	}
	return hue, variant
}
