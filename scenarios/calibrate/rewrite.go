package calibrate

import (
	"fmt"
	"strconv"
	"strings"

	"handoff/models/units"
)

// KeyValue is one catalog field to write: its YAML key and its value as
// YAML text.
type KeyValue struct{ Key, Value string }

// CatalogFields returns the YAML fields of the fitted parameters in h, in
// params order, split into the accelerator's and its link's. Fractions are
// written to 4 significant digits, times as durations rounded to the ns.
func CatalogFields(ps []Param, h *Hardware) (accel, link []KeyValue) {
	for _, p := range ps {
		v := p.Get(h)
		text := strconv.FormatFloat(v, 'g', 4, 64)
		if p.Hi > 1 && !p.Number { // a time, ns
			text = units.Duration(int64(v + 0.5)).String()
		}
		if p.OnLink {
			link = append(link, KeyValue{p.Name, text})
		} else {
			accel = append(accel, KeyValue{p.Name, text})
		}
	}
	return accel, link
}

// RewriteEntry returns data (a catalog YAML file) with the entry named name
// in its top-level list section ("accelerators" or "links") given the
// fields kv: a key the entry has gets its value replaced on its own line,
// keeping the line's indentation and trailing comment; a missing key is
// added after the entry's after key (or at the entry's end). Every other
// line, comments and order included, is kept byte for byte. file names
// the file in errors.
func RewriteEntry(data []byte, file, section, name, after string, kv []KeyValue) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	first, end, err := findEntry(lines, section, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	indent := entryIndent(lines[first])
	last := -1 // the line a previous missing key went to
	for _, f := range kv {
		i := findKey(lines[first:end], indent, f.Key)
		if i >= 0 {
			lines[first+i] = replaceValue(lines[first+i], f.Value)
			continue
		}
		at := end
		if last >= 0 {
			at = last + 1
		} else if j := findKey(lines[first:end], indent, after); j >= 0 {
			at = first + j + 1
			for at < end && findKey(lines[at:at+1], indent, "") < 0 && isContinuation(lines[at], indent) {
				at++
			}
		}
		line := strings.Repeat(" ", indent) + f.Key + ": " + f.Value + "\n"
		lines = append(lines[:at], append([]string{line}, lines[at:]...)...)
		last = at
		end++
	}
	return []byte(strings.Join(lines, "")), nil
}

// findEntry returns the line range [first, end) of the list item
// "- name: <name>" under the top-level key section.
func findEntry(lines []string, section, name string) (first, end int, err error) {
	in := false
	first = -1
	for i, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		top := len(t) > 0 && t[0] != ' ' && t[0] != '#'
		switch {
		case top && first >= 0:
			return first, trimBlank(lines, first, i), nil
		case top:
			in = strings.HasPrefix(t, section+":")
		case in && first >= 0 && strings.HasPrefix(strings.TrimLeft(t, " "), "- "):
			return first, trimBlank(lines, first, i), nil
		case in && first < 0 && itemName(t) == name:
			first = i
		}
	}
	if first < 0 {
		return 0, 0, fmt.Errorf("%s: no entry named %q", section, name)
	}
	return first, trimBlank(lines, first, len(lines)), nil
}

// trimBlank moves end back over blank and comment lines that close an entry.
func trimBlank(lines []string, first, end int) int {
	for end > first+1 {
		t := strings.TrimSpace(lines[end-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return end
}

// itemName returns the name of a "  - name: x" line, or "".
func itemName(t string) string {
	rest, ok := strings.CutPrefix(strings.TrimLeft(t, " "), "- name:")
	if !ok {
		return ""
	}
	return unquote(stripComment(rest))
}

// entryIndent is the column of the keys of the item starting on line l.
func entryIndent(l string) int {
	return len(l) - len(strings.TrimLeft(l, " ")) + 2
}

// findKey returns the index of the line "key:" at indent in lines (any key
// when key is ""), or −1. The item's first line counts as at indent.
func findKey(lines []string, indent int, key string) int {
	for i, l := range lines {
		t := l
		if i == 0 && strings.HasPrefix(strings.TrimLeft(l, " "), "- ") {
			t = strings.Repeat(" ", indent) + strings.TrimLeft(l, " ")[2:]
		}
		if len(t) < indent || strings.TrimLeft(t[:indent], " ") != "" || t[indent] == ' ' || t[indent] == '#' {
			continue
		}
		if k, _, ok := strings.Cut(t[indent:], ":"); ok && (key == "" || k == key) {
			return i
		}
	}
	return -1
}

// isContinuation reports whether l continues the previous key's value
// (indented deeper than the entry's keys).
func isContinuation(l string, indent int) bool {
	return len(l)-len(strings.TrimLeft(l, " ")) > indent && strings.TrimSpace(l) != ""
}

// replaceValue writes v as the value of a "key: value  # comment" line.
func replaceValue(l, v string) string {
	nl := ""
	if strings.HasSuffix(l, "\n") {
		l, nl = strings.TrimSuffix(l, "\n"), "\n"
	}
	k, rest, _ := strings.Cut(l, ":")
	comment := ""
	if i := commentAt(rest); i >= 0 {
		gap := rest[:i]
		comment = gap[len(strings.TrimRight(gap, " ")):] + rest[i:]
	}
	return k + ": " + v + comment + nl
}

// commentAt returns where a "#" comment starts in a YAML value, outside
// quotes, or −1.
func commentAt(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return i
		}
	}
	return -1
}

func stripComment(s string) string {
	if i := commentAt(s); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, "'")
}

// Quote returns s as a double-quoted YAML scalar.
func Quote(s string) string { return strconv.Quote(s) }
