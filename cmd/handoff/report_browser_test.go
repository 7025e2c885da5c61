package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestReportInBrowser renders the reports of a real run and of a real
// sweep in headless Chromium and checks that each page loads without a
// console error or an uncaught exception, that every inline plot has a
// box of its size on the page and that the full-page screenshot has ink
// (and colour: the data, not only the axes) in that box, and that a
// click on a column head of the sweep's table sorts its rows; and, at
// 1,400 and 900 px, that the run's, the sweep's, a closed-loop sweep's
// and a plan's pages fit the window, with plots at least half the content
// wide, values inside their cells and no plot beside a column of blank
// page (checkLayout). It runs
// only with HANDOFF_BROWSER_TEST=1 (.ci/browser-test.sh installs
// Chromium and sets it); CHROMIUM names the browser when it is not on
// the PATH, and HANDOFF_BROWSER_SHOTS a folder to keep the screenshots
// in.
func TestReportInBrowser(t *testing.T) {
	if os.Getenv("HANDOFF_BROWSER_TEST") != "1" {
		t.Skip("set HANDOFF_BROWSER_TEST=1 to render reports in headless Chromium (.ci/browser-test.sh)")
	}
	root := t.TempDir()
	run, sweep := filepath.Join(root, "run"), filepath.Join(root, "sweep")
	loop, plan := filepath.Join(root, "closed-loop"), filepath.Join(root, "plan")
	mustCLI(t, "run", quickstart, "-o", run)
	// A field name long enough to run out of its cell in the sweep's header.
	mustCLI(t, "sweep", quickstart, "-o", sweep, "--vary", "workload.synthetic.arrival.rate=10/s,20/s",
		"--vary", "pools.decode.engine.max_num_batched_tokens=4096,8192", "--set", "workload.synthetic.requests=300")
	mustCLI(t, "sweep", "../../scenarios/gptoss-120b-1p1d-h200.yaml", "-o", loop,
		"--set", "workload.client.requests=320", "--set", "workload.synthetic.requests=320")
	mustCLI(t, "plan", "../../scenarios/plan-quickstart.yaml", "--target-rate", "20", "-o", plan)
	for _, dir := range []string{run, sweep, loop, plan} {
		mustCLI(t, "report", dir)
	}

	ctx, cancel := browser(t)
	defer cancel()
	shots := os.Getenv("HANDOFF_BROWSER_SHOTS")
	if shots == "" {
		shots = root
	}
	for _, tc := range []struct {
		name, dir string
		minPlots  int
	}{{"run", run, 6}, {"sweep", sweep, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			shot := checkPage(t, ctx, filepath.Join(tc.dir, "report.html"), tc.minPlots)
			if err := os.WriteFile(filepath.Join(shots, "report-"+tc.name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.name == "sweep" {
				checkSort(t, ctx, "table-points", "request_goodput_rps")
			}
		})
	}
	for _, tc := range []struct{ name, dir string }{{"run", run}, {"sweep", sweep}, {"closed-loop", loop}, {"plan", plan}} {
		for _, width := range []int64{1400, 900} {
			t.Run(fmt.Sprintf("%s-%dpx", tc.name, width), func(t *testing.T) {
				shot := checkLayout(t, ctx, filepath.Join(tc.dir, "report.html"), width)
				name := fmt.Sprintf("report-%s-%d.png", tc.name, width)
				if err := os.WriteFile(filepath.Join(shots, name), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// layoutJS lists what is wrong with the page's layout at the window's
// width: the page wider than the window (a table or a value running off
// it), a plot narrower than half the content, a fact's value running out
// of its cell into the next, and a row of plots of which one is more than
// 1.5 times as high as another, or that holds one plot in a two-column
// grid before its last row (a column of blank page beside it).
const layoutJS = `(function () {
  var bad = [], de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) { bad.push("page " + de.scrollWidth + " px wide in a " + de.clientWidth + " px window"); }
  var main = document.querySelector("main"), cs = getComputedStyle(main);
  var content = main.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  document.querySelectorAll("figure.plot").forEach(function (f) {
    var w = f.getBoundingClientRect().width;
    if (w < 0.49 * content) { bad.push("plot " + f.id + " " + Math.round(w) + " px wide of " + Math.round(content)); }
  });
  document.querySelectorAll("dl.facts > div").forEach(function (d) {
    var dd = d.querySelector("dd"), r = d.getBoundingClientRect(), v = dd.getBoundingClientRect();
    if (v.right > r.right + 1 || dd.scrollWidth > dd.clientWidth + 1) {
      bad.push("the value of " + d.querySelector("dt").textContent + " runs out of its cell");
    }
  });
  document.querySelectorAll(".plots").forEach(function (g) {
    var rows = {}, tops = [];
    Array.from(g.children).forEach(function (f) {
      var r = f.getBoundingClientRect(), top = Math.round(r.top);
      if (!rows[top]) { rows[top] = []; tops.push(top); }
      rows[top].push({id: f.id, h: r.height, w: r.width});
    });
    var twoCols = getComputedStyle(g).gridTemplateColumns.split(" ").length > 1;
    tops.forEach(function (top, i) {
      var row = rows[top], hs = row.map(function (f) { return f.h; });
      if (Math.max.apply(null, hs) > 1.5 * Math.min.apply(null, hs)) {
        bad.push("plots " + row.map(function (f) { return f.id + " " + Math.round(f.h) + " px"; }).join(", ") + " share a row");
      }
      if (twoCols && row.length == 1 && i < tops.length - 1) { bad.push("plot " + row[0].id + " alone in a row"); }
    });
  });
  return bad;
})()`

// checkLayout loads page in a window width px wide and fails on each
// layoutJS finding; it returns the full-page screenshot.
func checkLayout(t *testing.T, ctx context.Context, page string, width int64) []byte {
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("loading %s at %d px: %v", page, width, err)
	}
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutJS))
	if err != nil {
		t.Fatalf("%s: checking the layout: %v", page, err)
	}
	for _, b := range bad {
		t.Errorf("%s at %d px: %s", filepath.Base(filepath.Dir(page)), width, b)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", page, err)
	}
	return shot
}

// mustCLI runs handoff with args and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) {
	t.Helper()
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("handoff %v: exit %d: %s", args, code, stderr)
	}
}

// browser starts headless Chromium (a 1280 px wide window) with a tab,
// all of it ended after 60 s at most.
func browser(t *testing.T) (context.Context, context.CancelFunc) {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900))
	if path := os.Getenv("CHROMIUM"); path != "" {
		opts = append(opts, chromedp.ExecPath(path))
	}
	timeout, cancelTimeout := context.WithTimeout(context.Background(), 60*time.Second)
	alloc, cancelAlloc := chromedp.NewExecAllocator(timeout, opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
		t.Fatalf("starting Chromium: %v (install Debian's chromium, or set CHROMIUM)", err)
	}
	return ctx, func() { cancelTab(); cancelAlloc(); cancelTimeout() }
}

// plotBox is where one inline plot sits on the page, in CSS px.
type plotBox struct {
	ID string  `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// boxesJS lists every inline plot's box in page coordinates.
const boxesJS = `Array.from(document.querySelectorAll("figure.plot svg")).map(function (s) {
  var r = s.getBoundingClientRect();
  return {id: s.parentNode.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
})`

// checkPage loads page, fails on any console error, checks its plots and
// returns the full-page screenshot (PNG).
func checkPage(t *testing.T, ctx context.Context, page string, minPlots int) []byte {
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	errs := consoleErrors(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("loading %s: %v", page, err)
	}
	boxes, err := chromedp.Run(ctx, chromedp.Evaluate[[]plotBox](boxesJS))
	if err != nil {
		t.Fatalf("%s: reading the plots' boxes: %v", page, err)
	}
	dpr, err := chromedp.Run(ctx, chromedp.Evaluate[float64]("window.devicePixelRatio"))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", page, err)
	}
	for _, m := range errs() {
		t.Errorf("%s: console %s: %s", page, m.Type, m.Text)
	}
	if len(boxes) < minPlots {
		t.Errorf("%s: %d inline plots, want at least %d", page, len(boxes), minPlots)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", page, err)
	}
	for _, b := range boxes {
		if msg := inkIn(img, b, dpr); msg != "" {
			t.Errorf("%s: plot %s at %.0f×%.0f+%.0f+%.0f: %s", page, b.ID, b.W, b.H, b.X, b.Y, msg)
		}
	}
	return shot
}

// consoleErrors collects the page's console errors and exceptions from
// now on; the function it returns stops collecting and returns them.
func consoleErrors(ctx context.Context) func() []chromedp.ConsoleMessage {
	sub, stop := context.WithCancel(ctx)
	msgs := chromedp.Console(sub)
	var mu sync.Mutex
	var got []chromedp.ConsoleMessage
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				got = append(got, m)
				mu.Unlock()
			}
		}
	}()
	return func() []chromedp.ConsoleMessage {
		time.Sleep(100 * time.Millisecond) // let messages of the last actions arrive
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// inkIn checks that box b (CSS px; dpr device px each) of the screenshot
// is a plot's size and holds drawn pixels: some not white, and some in
// colour (the palette's lines and bars, not only black axes and text).
// It returns what is wrong, or "".
func inkIn(img image.Image, b plotBox, dpr float64) string {
	if b.W < 200 || b.H < 120 {
		return "too small"
	}
	r := image.Rect(int(b.X*dpr)+2, int(b.Y*dpr)+2, int((b.X+b.W)*dpr)-2, int((b.Y+b.H)*dpr)-2)
	if !r.In(img.Bounds()) {
		return fmt.Sprintf("outside the %v screenshot", img.Bounds())
	}
	var ink, colour int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			lo, hi := min(cr, cg, cb)>>8, max(cr, cg, cb)>>8
			if lo < 230 {
				ink++
			}
			if hi-lo > 60 {
				colour++
			}
		}
	}
	area := r.Dx() * r.Dy()
	switch {
	case ink*100 < area:
		return fmt.Sprintf("blank: %d of %d pixels drawn", ink, area)
	case colour < 200:
		return fmt.Sprintf("no data drawn: %d coloured pixels", colour)
	}
	return ""
}

// checkSort clicks the head of column col of table id twice and checks
// the rows come in ascending, then descending order of that column.
func checkSort(t *testing.T, ctx context.Context, id, col string) {
	js := fmt.Sprintf(`(function () {
  var table = document.getElementById(%q);
  var heads = Array.from(table.tHead.rows[0].cells);
  var i = heads.findIndex(function (h) { return h.textContent === %q; });
  if (i < 0) { return null; }
  heads[i].click();
  return Array.from(table.tBodies[0].rows).map(function (r) { return Number(r.cells[i].getAttribute("data-key")); });
})()`, id, col)
	for _, want := range []int{1, -1} {
		keys, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](js))
		if err != nil || len(keys) < 2 {
			t.Fatalf("sorting table %s by %s: %v, keys %v", id, col, err, keys)
		}
		if !slices.IsSortedFunc(keys, func(a, b float64) int { return want * cmpFloat(a, b) }) {
			t.Errorf("table %s after a click on %s (order %d): %v", id, col, want, keys)
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
