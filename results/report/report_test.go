package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

// The testdata directories were written by handoff itself (run, sweep,
// goodput and plan of scenarios/quickstart.yaml and plan-quickstart.yaml
// at small request counts).

// element is one parsed element of a report: its name, attributes and
// the names of the elements under it.
type element struct {
	name     string
	attr     map[string]string
	children []string
	text     string
}

// parsePage parses a report as XML (the template writes well-formed XHTML
// syntax, the script in CDATA) and returns every element in document
// order; a parse error or an unclosed element fails the test.
func parsePage(t *testing.T, page []byte) []*element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	var all, stack []*element
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, e.name)
			}
			stack = append(stack, e)
			all = append(all, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("report ends inside <%s>", stack[len(stack)-1].name)
	}
	return all
}

func render(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, dir); err != nil {
		t.Fatalf("Write(%s): %v", dir, err)
	}
	return b.Bytes()
}

func TestWriteEveryKind(t *testing.T) {
	tests := []struct {
		dir      string
		sections []string
		plots    []string // a prefix of each plot expected
	}{
		{"run", []string{"scenario", "summary", "slo", "attribution", "preemption", "utilization"},
			[]string{"ttft_cdf", "tpot_cdf", "attribution", "attribution_owner", "timeline_decode-0"}},
		{"sweep", []string{"sweep", "scenario", "points", "plots"},
			[]string{"attainment", "request_goodput", "attribution", "attribution_owner"}},
		{"goodput", []string{"goodput", "curve"}, []string{"goodput"}},
		{"plan", []string{"plan", "fleets"}, []string{"pareto"}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			els := parsePage(t, render(t, filepath.Join("testdata", tc.dir)))
			var sections, plots []string
			ids := map[string]bool{}
			for _, e := range els {
				if id, ok := e.attr["id"]; ok && ids[id] {
					t.Errorf("two elements with id %q", id)
				} else if ok {
					ids[id] = true
				}
				switch {
				case e.name == "section":
					sections = append(sections, e.attr["id"])
				case e.name == "figure":
					plots = append(plots, strings.TrimPrefix(e.attr["id"], "plot-"))
					if !slices.Contains(e.children, "svg") {
						t.Errorf("figure %s has no inline svg", e.attr["id"])
					}
				}
			}
			if !slices.Equal(sections, tc.sections) {
				t.Errorf("sections %v, want %v", sections, tc.sections)
			}
			for _, want := range tc.plots {
				if !slices.Contains(plots, want) {
					t.Errorf("no plot %s among %v", want, plots)
				}
			}
		})
	}
}

// TestEveryFigureDefined checks that each heading, fact name, column head
// and plot carries its definition in a title attribute.
func TestEveryFigureDefined(t *testing.T) {
	for _, dir := range []string{"run", "sweep", "goodput", "plan"} {
		for _, e := range parsePage(t, render(t, filepath.Join("testdata", dir))) {
			switch e.name {
			case "h2", "dt", "th", "figure":
				if strings.TrimSpace(e.attr["title"]) == "" {
					t.Errorf("%s: <%s> %q has no definition (title)", dir, e.name, strings.TrimSpace(e.text))
				}
			}
		}
	}
}

// TestNothingFetched checks that a report names no external resource: no
// script, stylesheet, image or frame from anywhere, and no http(s) URL
// but the SVG namespaces.
func TestNothingFetched(t *testing.T) {
	namespaces := strings.NewReplacer(`"http://www.w3.org/2000/svg"`, "", `"http://www.w3.org/1999/xlink"`, "")
	for _, dir := range []string{"run", "sweep", "goodput", "plan"} {
		page := render(t, filepath.Join("testdata", dir))
		if rest := namespaces.Replace(string(page)); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
			i := max(strings.Index(rest, "http://"), strings.Index(rest, "https://"))
			t.Errorf("%s: report holds a URL: %q", dir, rest[max(i-40, 0):min(i+40, len(rest))])
		}
		for _, e := range parsePage(t, page) {
			if _, ok := e.attr["src"]; ok {
				t.Errorf("%s: <%s src=%q>", dir, e.name, e.attr["src"])
			}
			switch e.name {
			case "link", "img", "iframe", "object", "embed":
				t.Errorf("%s: report has a <%s> element", dir, e.name)
			}
		}
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	dir := filepath.Join("testdata", "run")
	if a, b := render(t, dir), render(t, dir); !bytes.Equal(a, b) {
		t.Error("two reports of one directory differ")
	}
}

func TestNotAnOutputDirectory(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, want string }{
		{filepath.Join("testdata", "sweep", "points"), "not a handoff output directory: it holds none of summary.json"},
		{file, "not a directory"},
		{filepath.Join(empty, "missing"), "no such file"},
	}
	for _, tc := range tests {
		err := Write(io.Discard, tc.dir)
		if err == nil || !strings.HasPrefix(err.Error(), tc.dir+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write(%s): %v, want %q", tc.dir, err, tc.want)
		}
	}
}

// TestEveryColumnDefined checks that Define knows every column the
// commands write, and every time component.
func TestEveryColumnDefined(t *testing.T) {
	for _, path := range []string{"sweep/results.csv", "goodput/goodput.csv", "plan/plan.csv"} {
		c, err := readCSV(filepath.Join("testdata", path))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range c.header {
			if Define(h) == "" {
				t.Errorf("%s: column %s has no definition", path, h)
			}
		}
	}
	for _, name := range results.TimeNames {
		if Define(name) == "" {
			t.Errorf("time component %s has no definition", name)
		}
	}
}

func TestDefineLatencyColumn(t *testing.T) {
	got := Define("ttft_p90_s")
	if !strings.HasPrefix(got, "TTFT, p90, s: ") || !strings.Contains(got, definitions["ttft"]) {
		t.Errorf("Define(ttft_p90_s) = %q", got)
	}
	for _, name := range []string{"ttft_p91_s", "foo_mean_s", "ttft_mean_ms", "ttft"} {
		if name != "ttft" && Define(name) != "" {
			t.Errorf("Define(%s) = %q, want none", name, Define(name))
		}
	}
}

func TestHighestMet(t *testing.T) {
	c := &csvFile{path: "g.csv", header: []string{"rate_rps", "gpus", "meets"},
		rows: [][]string{{"10", "4", "true"}, {"40", "4", "false"}, {"30", "4", "true"}, {"20", "4", "true"}}}
	if got, err := highestMet(c, "meets", "GPU"); err != nil || got != "30 req/s, 7.5 req/s per GPU over 4 GPUs" {
		t.Errorf("highestMet = %q, %v", got, err)
	}
	c.rows = [][]string{{"10", "4", "false"}}
	if got, _ := highestMet(c, "meets", "GPU"); !strings.HasPrefix(got, "none") {
		t.Errorf("highestMet with no rate met = %q", got)
	}
	c.rows = [][]string{{"x", "4", "true"}}
	if _, err := highestMet(c, "meets", "GPU"); err == nil || !strings.Contains(err.Error(), "g.csv:2: column rate_rps") {
		t.Errorf("bad rate: %v", err)
	}
}

func TestSavedPlotRefusesScript(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`
	if err := os.WriteFile(filepath.Join(dir, "plots", "goodput.svg"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := savedPlot(dir, "goodput"); err == nil || !strings.Contains(err.Error(), "goodput.svg") {
		t.Errorf("savedPlot of an SVG with a script: %v", err)
	}
}

// TestArrangePairsTallPlots: tall plots follow the others, so that they
// share rows with each other; an odd short plot goes last.
func TestArrangePairsTallPlots(t *testing.T) {
	fig := func(name string, aspect float64) figure { return figure{Name: name, Aspect: aspect} }
	p := &page{Sections: []section{{Figures: []figure{fig("attainment", 0.67), fig("attribution", 1.3),
		fig("attribution_owner", 1.3), fig("interactivity", 0.67), fig("goodput", 0.67)}}}}
	arrange(p)
	var got []string
	for _, f := range p.Sections[0].Figures {
		got = append(got, f.Name)
	}
	want := []string{"attainment", "interactivity", "attribution", "attribution_owner", "goodput"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
