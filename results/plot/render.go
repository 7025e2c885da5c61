package plot

import (
	"fmt"
	"image/color"
	"io"
	"unicode/utf8"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Format is an image format a plot can be rendered in.
type Format string

// The supported formats.
const (
	PNG Format = "png" // raster, 150 dpi
	SVG Format = "svg" // vector; text references the Liberation Sans font
)

// Sizes of the plots.
const (
	dpi          = 150
	plotWidth    = 6 * vg.Inch
	plotHeight   = 4 * vg.Inch
	maxNameRunes = 40 // longer legend and axis names are cut with an ellipsis
	margin       = 5  // pt of white around every plot
)

// render draws paint on a width × height canvas of format f and writes the
// image to w.
func render(w io.Writer, f Format, width, height vg.Length, paint func(draw.Canvas)) error {
	var cw vg.CanvasWriterTo
	switch f {
	case PNG:
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
	case SVG:
		cw = vgsvg.New(width, height)
	default:
		return fmt.Errorf("plot: unknown format %q (want png or svg)", f)
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	paint(draw.Crop(dc, margin, -margin, margin, -margin))
	_, err := cw.WriteTo(w)
	return err
}

// sans returns the plots' font at size pt.
func sans(pt float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(pt)}
}

// newPlot returns a plot with the house style: sans-serif text, axis
// labels, a light grid behind the data.
func newPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(12)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(10.5)
		a.Tick.Label.Font = sans(9)
		a.Tick.Length = vg.Points(4)
		a.Tick.Marker = niceTicks{}
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Label.Padding, p.Y.Label.Padding = vg.Points(3), vg.Points(3)
	g := plotter.NewGrid()
	g.Vertical.Color = gridColor
	g.Horizontal.Color = gridColor
	p.Add(g)
	return p
}

// shorten cuts s to maxNameRunes runes, ending it with an ellipsis.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxNameRunes {
		return s
	}
	r := []rune(s)
	return string(r[:maxNameRunes-1]) + "…"
}

// Colours.
var (
	gridColor  = color.Gray{Y: 225}
	inkColor   = color.Gray{Y: 40}  // reference lines (SLO, target)
	mutedColor = color.Gray{Y: 165} // points off the Pareto front
	alertColor = rgb(0xc0, 0x24, 0x24)
)

// palette holds distinct colours for lines and owners, in order of use.
var palette = [...]color.RGBA{
	rgb(0x1f, 0x63, 0xb4), rgb(0xe0, 0x6c, 0x12), rgb(0x2a, 0x8c, 0x4a), rgb(0xb8, 0x2e, 0x8a),
	rgb(0x6a, 0x4c, 0xc2), rgb(0x8a, 0x5a, 0x2b), rgb(0x19, 0x9a, 0xa3), rgb(0x5c, 0x5c, 0x5c),
	rgb(0xc9, 0xa2, 0x0c), rgb(0xd6, 0x3c, 0x3c),
}

// glyphs distinguish lines beyond the palette's length.
var glyphs = [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.PyramidGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}}

// lineStyle returns the colour, dashes and glyph of the i-th line.
func lineStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := palette[i%len(palette)]
	ls := draw.LineStyle{Color: c, Width: vg.Points(1.5)}
	if (i/len(palette))%2 == 1 {
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	gs := draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: glyphs[(i/len(palette)+i)%len(glyphs)]}
	return ls, gs
}

// dashPatterns tell line variants apart: solid, dashed, dotted, dash-dot.
var dashPatterns = [...][]vg.Length{nil, {vg.Points(6), vg.Points(2.5)}, {vg.Points(1.5), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(1.5), vg.Points(2)}}

// gridStyle returns the look of a line in a grid of settings: the hue-th
// palette colour, the variant-th dash pattern and marker.
func gridStyle(hue, variant int) (draw.LineStyle, draw.GlyphStyle) {
	c := palette[hue%len(palette)]
	ls := draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashPatterns[variant%len(dashPatterns)]}
	gs := draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: glyphs[variant%len(glyphs)]}
	return ls, gs
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 255} }

// dashed is the style of reference lines.
func dashed() draw.LineStyle {
	return draw.LineStyle{Color: inkColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
}

// refLine returns a straight line from (x0, y0) to (x1, y1) in style ls.
func refLine(x0, y0, x1, y1 float64, ls draw.LineStyle) *plotter.Line {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y1}})
	if err != nil {
		panic("plot: " + err.Error()) // two finite points never fail
	}
	l.LineStyle = ls
	return l
}
