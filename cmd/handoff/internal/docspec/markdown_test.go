package docspec

import (
	"strconv"
	"strings"
	"testing"
)

const sample = "# Title\n" + // 1
	"\n" +
	"Run `handoff run a.yaml` or read `docs/X.md`; see <!-- doc:exit status=\"1\" -->`handoff run b.yaml`.\n" + // 3
	"\n" +
	"<!-- doc:external reason=\"a cluster\" -->\n" + // 5
	"```sh\n" +
	"kubectl apply -f x.yaml \\\n" + // 7
	"  -l step=sweep\n" +
	"```\n" +
	"\n" +
	"<!-- doc:table\n" + // 11
	"labels: [router]\n" +
	"-->\n" +
	"| router | x |\n" + // 14
	"|---|---|\n" +
	"| a | `handoff catalog models` |\n" +
	"\n" +
	"Rows' flags: a: `--set router.policy=a`; b, c: `--set router.policy=b --set x=1`.\n" // 18

func TestParseItemsAndMarkers(t *testing.T) {
	d, err := Parse("f.md", sample)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range d.Items {
		s := []string{[]string{"block", "span", "table", "flags"}[it.Kind], strconv.Itoa(it.Line), strconv.Itoa(it.End)}
		for _, m := range it.Markers {
			s = append(s, "doc:"+m.Kind)
		}
		for _, c := range it.Commands {
			s = append(s, c.Text)
		}
		for _, r := range it.Rows {
			s = append(s, r.Label+"="+r.Flags.Text)
		}
		got = append(got, strings.Join(s, " "))
	}
	want := []string{
		"span 3 4 handoff run a.yaml",
		"span 3 4 doc:exit handoff run b.yaml",
		"block 6 10 doc:external kubectl apply -f x.yaml -l step=sweep",
		"table 14 17 doc:table",
		"span 16 17 handoff catalog models",
		"flags 18 19 a=--set router.policy=a b, c=--set router.policy=b --set x=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tb := d.Items[3]; tb.Markers[0].Body != "\nlabels: [router]\n" || len(tb.Body) != 3 || tb.Above != d.Items[2] {
		t.Errorf("table: spec %q, %d lines, above %v", tb.Markers[0].Body, len(tb.Body), tb.Above)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"text\n\n<!-- doc:exit status=\"1\" -->\n", "f.md:3: marker doc:exit has nothing after it"},
		{"<!-- doc:exits status=\"1\" -->\n`handoff run a.yaml`\n", "f.md:1: marker doc:exits: unknown kind"},
		{"<!-- doc:exit code=\"1\" -->\n`handoff run a.yaml`\n", `unknown attribute "code"`},
		{"<!-- doc:external -->\n`kubectl get pods`\n", `needs reason="..."`},
		{"<!-- doc:exit status=1 -->\n`handoff run a.yaml`\n", `want name="value" pairs`},
		{"```sh\nhandoff run 'a.yaml\n```\n", "f.md:2: unterminated ' quote"},
		{"```sh\nhandoff run a.yaml\n", "f.md:1: code block never closed"},
		{"Rows' flags: none here.\n", "Rows' flags: line with no `flags`"},
	} {
		_, err := Parse("f.md", tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestACommentOverLinesIsOneMarker(t *testing.T) {
	d, err := Parse("f.md", "<!-- doc:table\nrows: flags\n\n-->\n| a |\n|---|\n")
	if err != nil || len(d.Items) != 1 || len(d.Items[0].Markers) != 1 {
		t.Fatalf("%v, %+v", err, d)
	}
	if m := d.Items[0].Markers[0]; m.Line != 1 || m.Body != "\nrows: flags\n\n" {
		t.Errorf("marker at line %d with body %q", m.Line, m.Body)
	}
}

func TestIsCommandAndPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text              string
		command, synopsis bool
	}{
		{"handoff run scenarios/a.yaml --set 'x={max: 512GB}'", true, false},
		{"go run ./cmd/handoff run SCENARIO [-o DIR]", true, true},
		{"handoff merge [-o OUT] DIR...", true, true},
		{"--set workload.synthetic.arrival.rate=R/s", true, true},
		{"--set pools.decode.wafer.pressure_policy=...", true, true},
		{"--set path=value", true, true},
		{"--set router.policy=dynamo --set x=1", true, false},
		{"--set", false, false},
		{"-o DIR", false, true},
		{"go test ./...", true, false},
		{"go run", false, false},
		{"kubectl apply -f docs/k8s-sweep-job.yaml", true, false},
		{"docs/slurm-sweep.sh a.yaml /shared/out 16", true, false},
		{"sbatch --array=<ids>", true, false},
		{"slurm-sweep.sh", false, false},
		{"docs/CAPACITY-PLANNING.md", false, false},
		{"router.policy", false, false},
	} {
		cmds, err := SplitShell("f.md", 1, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsCommand(cmds[0].Words); got != tc.command {
			t.Errorf("IsCommand(%q) = %v", tc.text, got)
		}
		if got := HasPlaceholder(cmds[0]); got != tc.synopsis {
			t.Errorf("HasPlaceholder(%q) = %v", tc.text, got)
		}
	}
}
