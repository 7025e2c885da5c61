package docspec

import (
	"strings"
	"testing"
)

// specRows parses a document whose table (after an sh block) has the given
// spec, and returns the spec's rows.
func specRows(t *testing.T, spec, after string) ([]Row, error) {
	t.Helper()
	text := "```sh\nhandoff run a.yaml -o out/a\nhandoff run b.yaml\n```\n\n<!-- doc:table\n" + spec +
		"-->\n| x |\n|---|\n\n" + after
	d, err := Parse("f.md", text)
	if err != nil {
		t.Fatal(err)
	}
	tb := d.Items[1]
	s, err := ParseSpec(tb.Markers[0])
	if err != nil {
		return nil, err
	}
	return s.Expand(d, tb, tb.Markers[0].Line)
}

// commands returns each row's label and command.
func commands(rows []Row) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Label()+": "+strings.Join(r.Cmd.Words, " ")+" exit "+string(rune('0'+r.Exit)))
	}
	return strings.Join(s, "\n")
}

const cols = "columns: [{head: g, value: slo.goodput_rps, format: \"%.2f\"}]\n"

func TestExpandRows(t *testing.T) {
	for _, tc := range []struct{ spec, after, want string }{
		{"command: handoff run c.yaml\nrows: flags\nlabels: [p]\nskip: [b]\nexit: {c: 1}\n" + cols,
			"Rows' flags: a: `--set p=a`; b: `--set p=b`; c: `--set p=c --set q='x y'`.\n",
			"a: handoff run c.yaml --set p=a exit 0\nc: handoff run c.yaml --set p=c --set q=x y exit 1"},
		{"command: handoff run\nlabels: [f, r]\nproduct: [[[A, a.yaml], [B, b.yaml]], [[\"1\", --r=1], [\"2\", \"\"]]]\n" + cols, "",
			"A, 1: handoff run a.yaml --r=1 exit 0\nA, 2: handoff run a.yaml exit 0\nB, 1: handoff run b.yaml --r=1 exit 0\nB, 2: handoff run b.yaml exit 0"},
		{"labels: [p]\nrows: [{cells: [one], block: 2}, {cells: [two], block: 1, exit: 1}]\n" + cols, "",
			"one: handoff run b.yaml exit 0\ntwo: handoff run a.yaml -o out/a exit 1"},
		{"block: 1\nlabels: [p]\nrows: [{cells: [x], args: --seed 2, where: a=1 b=2}]\n" + cols, "",
			"x: handoff run a.yaml -o out/a --seed 2 exit 0"},
	} {
		rows, err := specRows(t, tc.spec, tc.after)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if got := commands(rows); got != tc.want {
			t.Errorf("%s: rows\n%s\nwant\n%s", tc.spec, got, tc.want)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	flags := "Rows' flags: a: `--set p=a`.\n"
	for _, tc := range []struct{ spec, after, want string }{
		{"command: handoff run\nrows: flags\nlabels: [p]\ncolumn: []\n" + cols, flags, "line 10: field column not found"},
		{"command: handoff run\nrows: flags\nlabels: [p]\n", flags, "no columns"},
		{"command: handoff run\nrows: flags\nlabels: [p]\ncolumns: [{head: g, value: x}]\n", flags, `column "g" needs head, value and format`},
		{"command: handoff run\nrows: flags\nlabels: [p]\n" + cols, "", "no \"Rows' flags:\" line follows"},
		{"command: handoff run\nrows: flags\nlabels: [p]\nexit: {b: 1}\n" + cols, flags, `exit names row "b"`},
		{"command: handoff run\nrows: flags\nlabels: [p]\nskip: [b]\n" + cols, flags, `skip names row "b"`},
		{"command: handoff run\nrows: flags\nlabels: [p, q]\n" + cols, flags, "1 label cells for 2 labels"},
		{"rows: [{cells: [a], block: 3}]\nlabels: [p]\n" + cols, "", "no command 3"},
		{"rows: [{cells: [a]}]\nlabels: [p]\n" + cols, "", "needs command or block"},
		{"command: handoff run\nrows: some\n" + cols, "", `want a list or "flags"`},
		{"command: handoff run\nlabels: [p]\nrows: [{cells: [a], where: x}]\n" + cols, "", "want column=value"},
	} {
		_, err := specRows(t, tc.spec, tc.after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}
