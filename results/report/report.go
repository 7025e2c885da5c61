package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"

	"handoff/results"
)

// The files that tell a directory's kind, and the others a report reads.
const (
	resultsFile  = results.SweepResultsFile // a sweep's table (handoff sweep, merge)
	summaryFile  = results.SummaryFile      // a run's summary (handoff run -o)
	goodputFile  = results.GoodputFile      // a goodput search's curve (handoff goodput -o)
	planFile     = results.PlanFile         // a plan's fleets (handoff plan -o)
	scenarioFile = results.ScenarioFile
)

// kind is one kind of output directory: the file that marks it and the
// function that builds its page.
type kind struct {
	marker, what string
	build        func(dir string) (*page, error)
}

// kinds lists the directory kinds in the order they are tried: a sweep's
// points hold summary.json files too, but not at the top.
func kinds() []kind {
	return []kind{
		{resultsFile, "a sweep", sweepPage},
		{summaryFile, "a run", runPage},
		{goodputFile, "a goodput search", goodputPage},
		{planFile, "a plan", planPage},
	}
}

// Expected names the files that mark a handoff output directory, for
// errors and help texts.
func Expected() string {
	return "summary.json (handoff run -o), results.csv (handoff sweep), goodput.csv (handoff goodput -o) or plan.csv (handoff plan -o)"
}

// Kind returns what dir holds ("a run", "a sweep", "a goodput search",
// "a plan"), or an error naming dir and the files expected when it is not
// a handoff output directory.
func Kind(dir string) (string, error) {
	k, err := detect(dir)
	return k.what, err
}

// detect returns dir's kind.
func detect(dir string) (kind, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return kind{}, fmt.Errorf("%s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return kind{}, fmt.Errorf("%s: not a directory: want a handoff output directory holding %s", dir, Expected())
	}
	for _, k := range kinds() {
		if _, err := os.Stat(filepath.Join(dir, k.marker)); err == nil {
			return k, nil
		}
	}
	return kind{}, fmt.Errorf("%s: not a handoff output directory: it holds none of %s", dir, Expected())
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Write renders the report of the output directory dir as one
// self-contained HTML page (CSS, script and SVG plots inline; nothing
// fetched) to w. It reads only dir's files and writes nothing into dir.
// Errors name the file (and line and column for bad values); a directory
// of no known kind is an error naming the files expected. Cost: linear
// in the size of the files read, plus drawing the plots (a run's
// timelines dominate: ~0.1 s for a two-minute run of four instances).
func Write(w io.Writer, dir string) error {
	k, err := detect(dir)
	if err != nil {
		return err
	}
	p, err := k.build(dir)
	if err != nil {
		return err
	}
	arrange(p)
	var b bytes.Buffer
	if err := newTemplate().Execute(&b, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

//go:embed report.html.tmpl
var pageTemplate string

//go:embed report.css
var pageCSS string

//go:embed sort.js
var pageJS string

// newTemplate parses the page template with its CSS and script. The
// script sits in a CDATA section behind line comments, so that the page
// is well-formed XML as well as HTML (the tests parse it as XML).
func newTemplate() *template.Template {
	funcs := template.FuncMap{
		"css": func() template.CSS { return template.CSS(pageCSS) },
		"js":  func() template.JS { return template.JS("//<![CDATA[\n" + pageJS + "//]]>\n") },
	}
	return template.Must(template.New("report").Funcs(funcs).Parse(pageTemplate))
}
