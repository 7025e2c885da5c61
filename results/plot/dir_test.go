package plot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

// copyFixture copies testdata/name into a fresh directory and returns it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plotFiles returns the names in dir/plots, sorted, after checking that
// each is a plausible image.
func plotFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, plotsDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, plotsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, e.Name(), Format(filepath.Ext(e.Name())[1:]), b)
		names = append(names, e.Name())
	}
	return names
}

// both returns each base name with .png and .svg, sorted.
func both(bases ...string) []string {
	var out []string
	for _, b := range bases {
		out = append(out, b+".png", b+".svg")
	}
	slices.Sort(out)
	return out
}

// saveFiles is a Save that writes plain files under dir.
func saveFiles(dir string) Save {
	return func(rel string, write func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	}
}

func TestDrawDir(t *testing.T) {
	tests := []struct {
		fixture string
		edit    func(t *testing.T, dir string) // nil: as committed
		want    []string
	}{
		{"sweep", nil, both("attainment", "attribution", "attribution_owner", "request_goodput")},
		{"run", nil, both("attribution", "attribution_owner", "tpot_cdf", "ttft_cdf")},
		{"run", func(t *testing.T, dir string) { remove(t, dir, requestsCSV) }, both("attribution", "attribution_owner")},
		{"sweep", func(t *testing.T, dir string) { // no points run yet
			remove(t, dir, results.PointsDir)
		}, both("attainment", "request_goodput")},
		{"sweep", func(t *testing.T, dir string) { // nothing varies the rate: the curves are against decode.count
			rewrite(t, dir, sweepCSV, "workload.rate_scale", "router.policy")
		}, both("attainment", "attribution", "attribution_owner", "request_goodput")},
	}
	for i, tt := range tests {
		dir := copyFixture(t, tt.fixture)
		if tt.edit != nil {
			tt.edit(t, dir)
		}
		if err := DrawDir(dir, saveFiles(dir)); err != nil {
			t.Fatalf("case %d (%s): %v", i, tt.fixture, err)
		}
		if got := plotFiles(t, dir); !slices.Equal(got, tt.want) {
			t.Errorf("case %d (%s): wrote %v, want %v", i, tt.fixture, got, tt.want)
		}
		if *outDir != "" && tt.edit == nil {
			keepPlots(t, filepath.Join(dir, plotsDir), filepath.Join(*outDir, tt.fixture))
		}
	}
}

func TestDrawDirErrors(t *testing.T) {
	tests := []struct {
		fixture string
		edit    func(t *testing.T, dir string)
		want    string
	}{
		{"run", func(t *testing.T, dir string) { remove(t, dir, summaryJSON) }, "no results.csv (a sweep) or summary.json (a run)"},
		{"sweep", func(t *testing.T, dir string) { rewrite(t, dir, sweepCSV, ",0.345,", ",lots,") },
			"results.csv:5: column attainment: not a number"},
		{"sweep", func(t *testing.T, dir string) { rewrite(t, dir, sweepCSV, "request_goodput_rps", "goodput") },
			"results.csv:1: no request_goodput_rps column"},
		{"sweep", func(t *testing.T, dir string) { rewrite(t, dir, sweepCSV, "\n0002,1,3,", "\n0002,1,x3,") },
			"results.csv:4: column workload.rate_scale: not a rate"},
		{"sweep", func(t *testing.T, dir string) {
			rewrite(t, dir, filepath.Join(results.PointsDir, "0003", summaryJSON), "{", "[")
		},
			filepath.Join("0003", summaryJSON)},
		{"run", func(t *testing.T, dir string) { rewrite(t, dir, requestsCSV, ",completed,", ",completed,,") },
			"requests.csv"},
	}
	for i, tt := range tests {
		dir := copyFixture(t, tt.fixture)
		tt.edit(t, dir)
		err := DrawDir(dir, saveFiles(dir))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("case %d: got %v, want an error containing %q", i, err, tt.want)
		}
	}
}

// TestReadLatenciesCountsCompleted: the fixture's CSV holds one TTFT per
// completed request.
func TestReadLatenciesCountsCompleted(t *testing.T) {
	sum, err := results.ReadSummary(filepath.Join("testdata", "run", summaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	ttft, tpot, err := readLatencies(filepath.Join("testdata", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(ttft)) != sum.Requests.Completed || len(tpot) == 0 || len(tpot) > len(ttft) {
		t.Errorf("%d TTFTs and %d TPOTs for %d completed requests", len(ttft), len(tpot), sum.Requests.Completed)
	}
}

// keepPlots copies the files of dir into out, overwriting.
func keepPlots(t *testing.T, dir, out string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(out, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// rewrite replaces the first old with new in dir/name.
func rewrite(t *testing.T, dir, name, old, new string) {
	t.Helper()
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", name, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNumericColumn: without a rate, the curves' axis is the first varied
// column of numbers but the seed; none when no column is all numbers.
func TestNumericColumn(t *testing.T) {
	tab := &sweepTable{varied: []string{"seed", "router.policy", "pools.decode.count"},
		values: [][]string{{"1", "dynamo", "2"}, {"2", "llmd", "4"}}}
	if got := numericColumn(tab); got != 2 {
		t.Errorf("column %d, want 2 (decode.count)", got)
	}
	tab.values[1][2] = "four"
	if got := numericColumn(tab); got != -1 {
		t.Errorf("column %d, want -1", got)
	}
}

// TestAttributionPages: more bars than a page holds give pages, each
// saying which bars it shows.
func TestAttributionPages(t *testing.T) {
	n := 2*maxBars + 5
	labels, attrs := make([]string, n), make([]results.Attribution, n)
	for i := range labels {
		labels[i] = fmt.Sprint(i)
		attrs[i] = results.Attribution{TTFTS: map[string]float64{"prefill_compute": 0.1}, DecodeS: map[string]float64{}}
	}
	figs := attributionFigures(labels, attrs, "")
	var names []string
	for _, f := range figs {
		names = append(names, f.name)
	}
	want := []string{"attribution", "attribution_owner", "attribution_2", "attribution_owner_2", "attribution_3", "attribution_owner_3"}
	if !slices.Equal(names, want) {
		t.Errorf("figures %v, want %v", names, want)
	}
	var b bytes.Buffer
	if err := figs[4].draw(&b, SVG); err != nil || !strings.Contains(b.String(), fmt.Sprintf("bars 61–%d of %d", n, n)) {
		t.Errorf("the last page does not say which bars it shows (%v)", err)
	}
}

// TestChoiceChooses: --select keeps the points whose id starts with a
// prefix; --top the slowest of those, slowest first.
func TestChoiceChooses(t *testing.T) {
	ids := []string{"0000-a", "0001-b", "0002-c", "0003-d"}
	labels := []string{"a", "b", "c", "d"}
	attrs := make([]results.Attribution, 4)
	for i, s := range []float64{1, 4, 2, 3} {
		attrs[i] = results.Attribution{TTFTS: map[string]float64{"prefill_compute": s}, DecodeS: map[string]float64{"decode_compute": s}}
	}
	for _, c := range []struct {
		choice Choice
		want   []string
	}{
		{Choice{}, []string{"a", "b", "c", "d"}},
		{Choice{Top: 2}, []string{"b", "d"}},
		{Choice{Select: []string{"0000", "0002"}}, []string{"a", "c"}},
		{Choice{Select: []string{"0000", "0002"}, Top: 1}, []string{"c"}},
	} {
		got, _ := c.choice.choose(ids, labels, attrs)
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.choice, got, c.want)
		}
	}
}

// TestDrawDirChoosingRefuses: a choice that picks no point is an error
// naming the points there are, and so is any choice on a run's
// directory (one bar); nothing is drawn.
func TestDrawDirChoosingRefuses(t *testing.T) {
	tests := []struct {
		fixture string
		choice  Choice
		want    string
	}{
		{"sweep", Choice{Select: []string{"0000", "0099"}}, "--select 0099: no point of %s has an id that starts with it; " +
			"its 8 points are 0000, 0001, 0002, 0003, 0004, 0005, 0006, 0007"},
		{"run", Choice{Select: []string{"0000"}}, "%s is a run's directory: --select and --top apply to sweeps"},
		{"run", Choice{Top: 3}, "%s is a run's directory: --select and --top apply to sweeps"},
	}
	for _, tt := range tests {
		dir := copyFixture(t, tt.fixture)
		err := DrawDirChoosing(dir, saveFiles(dir), nil, tt.choice)
		if want := fmt.Sprintf(tt.want, dir); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s %+v: %v, want %q", tt.fixture, tt.choice, err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, plotsDir)); err == nil {
			t.Errorf("%s %+v: drew plots", tt.fixture, tt.choice)
		}
	}
}

// TestDrawDirChoosingRemovesStalePages: the attribution pages an earlier
// drawing of more bars left are removed when fewer are drawn; other
// files in plots/ stay.
func TestDrawDirChoosingRemovesStalePages(t *testing.T) {
	dir := copyFixture(t, "sweep")
	stale := both("attribution_2", "attribution_owner_2", "attribution_owner_3")
	kept := []string{"attribution_notes.png", "attribution_02.png", "attribution_1.svg", "mine.png"}
	for _, n := range append(slices.Clone(stale), kept...) {
		write(t, filepath.Join(dir, plotsDir), n, "an earlier drawing")
	}
	var removed []string
	rm := func(rel string) error {
		removed = append(removed, rel)
		return os.Remove(filepath.Join(dir, filepath.FromSlash(rel)))
	}
	if err := DrawDirChoosing(dir, saveFiles(dir), rm, Choice{Top: 2}); err != nil {
		t.Fatal(err)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, plotsDir, n)); err == nil {
			t.Errorf("stale page %s is still there", n)
		}
	}
	for _, n := range append(kept, both("attribution", "attribution_owner")...) {
		if _, err := os.Stat(filepath.Join(dir, plotsDir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if len(removed) != len(stale) {
		t.Errorf("removed %v, want the %d stale pages", removed, len(stale))
	}
}

// write makes dir/name hold text, creating dir.
func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
