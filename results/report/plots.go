package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"handoff/results/plot"
)

// drawnPlots re-draws a run's or a sweep's plots from its saved files
// (plot.DrawDir), as SVG only and into memory: nothing is written to
// dir. Figures come in DrawDir's order.
func drawnPlots(dir string) ([]figure, error) {
	var figs []figure
	save := func(rel string, write func(io.Writer) error) error {
		name, ok := strings.CutSuffix(strings.TrimPrefix(rel, "plots/"), "."+string(plot.SVG))
		if !ok {
			return nil // the PNG twin: not drawn at all
		}
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return err
		}
		fig, err := newFigure(name, b.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		figs = append(figs, fig)
		return nil
	}
	if err := plot.DrawDir(dir, save); err != nil {
		return nil, err
	}
	return figs, nil
}

// savedPlot reads dir/plots/name.svg, which goodput and plan write; ok is
// false when the file is missing.
func savedPlot(dir, name string) (fig figure, ok bool, err error) {
	path := filepath.Join(dir, "plots", name+".svg")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return figure{}, false, nil
	}
	if err != nil {
		return figure{}, false, err
	}
	fig, err = newFigure(name, b)
	if err != nil {
		return figure{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return fig, true, nil
}

// newFigure makes an inline figure of an SVG document: the XML prolog and
// comments before the <svg> element are cut, and a document that is not a
// plain SVG picture (no <svg>, or a script or foreign object in it) is an
// error, since it is pasted into the page as is.
func newFigure(name string, svg []byte) (figure, error) {
	s := string(svg)
	i := strings.Index(s, "<svg")
	if i < 0 {
		return figure{}, fmt.Errorf("not an SVG image")
	}
	lower := strings.ToLower(s)
	for _, bad := range []string{"<script", "<foreignobject", "href=\"http", "javascript:"} {
		if strings.Contains(lower, bad) {
			return figure{}, fmt.Errorf("SVG holds %q, which a report does not inline", bad)
		}
	}
	fig := figure{Name: name, Title: plotTitle(name), Def: plotDef(name), SVG: template.HTML(s[i:])}
	if w, h, ok := svgSize(s[i:]); ok {
		fig.Aspect = h / w
	}
	return fig, nil
}

// svgSize reads the width and height of the <svg> element that starts
// svg from its viewBox; ok is false without one.
func svgSize(svg string) (w, h float64, ok bool) {
	tag, _, _ := strings.Cut(svg, ">")
	_, rest, found := strings.Cut(tag, `viewBox="`)
	if !found {
		return 0, 0, false
	}
	box, _, _ := strings.Cut(rest, `"`)
	f := strings.Fields(box)
	if len(f) != 4 {
		return 0, 0, false
	}
	w, errW := strconv.ParseFloat(f[2], 64)
	h, errH := strconv.ParseFloat(f[3], 64)
	return w, h, errW == nil && errH == nil && w > 0
}

// plotTitle is the caption of a plot by its file's base name.
func plotTitle(name string) string {
	if inst, ok := strings.CutPrefix(name, "timeline_"); ok {
		return "timeline of " + inst
	}
	return strings.ReplaceAll(name, "_", " ")
}

// plotDef defines a plot by its file's base name.
func plotDef(name string) string {
	if strings.HasPrefix(name, "timeline_") {
		return definitions["timeline"]
	}
	if d, ok := definitions[name+"_plot"]; ok {
		return d
	}
	return definitions[name]
}

// pick returns the figures whose names match keep, in order.
func pick(figs []figure, keep func(string) bool) []figure {
	var out []figure
	for _, f := range figs {
		if keep(f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// named returns a keep function for pick matching any of names.
func named(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}
