package plot

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// fixtureTI is two configurations at concurrencies 1, 4, 16, 64:
// interactivity falls and throughput per GPU rises with concurrency.
func fixtureTI() []TICurve {
	return []TICurve{
		{Name: "decode.count=1", Points: []TIPoint{{1, 100, 40}, {4, 90, 140}, {16, 60, 400}, {64, 20, 700}}},
		{Name: "decode.count=2", Points: []TIPoint{{1, 110, 25}, {4, 105, 95}, {16, 80, 330}, {64, 40, 600}}},
	}
}

func TestTIFront(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		points []TIPoint
		want   []int
	}{
		// By hand, most interactive first: (110, 25) on; (105, 95) on;
		// (100, 40) loses to (105, 95); (90, 140) on; (80, 330) on;
		// (60, 400) on; (40, 600) on; (20, 700) on. Sorted by
		// interactivity: 20, 40, 60, 80, 90, 105, 110.
		{"fixture", slices.Concat(fixtureTI()[0].Points, fixtureTI()[1].Points), []int{3, 7, 2, 6, 1, 5, 4}},
		{"equal points: the first", []TIPoint{{1, 5, 5}, {2, 5, 5}}, []int{0}},
		{"same interactivity: the higher throughput", []TIPoint{{1, 5, 5}, {2, 5, 6}}, []int{1}},
		{"same throughput: the more interactive", []TIPoint{{1, 5, 5}, {2, 6, 5}}, []int{1}},
		{"dominated on both", []TIPoint{{1, 5, 5}, {2, 4, 4}, {3, 6, 3}}, []int{0, 2}},
		{"non-finite left out", []TIPoint{{1, nan, 9}, {2, 1, math.Inf(1)}, {3, 1, 1}}, []int{2}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		if got := TIFront(tt.points); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTIFiguresGroupsByConfiguration(t *testing.T) {
	tab := &sweepTable{path: "results.csv", varied: []string{"pools.decode.count", concurrencyColumn, "seed"},
		values: [][]string{{"1", "4", "1"}, {"1", "4", "2"}, {"1", "16", "1"}, {"2", "4", "1"}},
		lines:  []int{2, 3, 4, 5}, attainment: make([]float64, 4), requestGoodputRPS: make([]float64, 4),
		throughputPerGPU: []float64{100, 200, 400, 90}, interactivity: []float64{80, 60, 50, 95}}
	figs, err := tiFigures(tab, "GPU")
	if err != nil || len(figs) != 1 || figs[0].name != "throughput_interactivity" {
		t.Fatalf("figures %v, %v", figs, err)
	}
	var buf bytes.Buffer
	if err := figs[0].draw(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"decode.count=1", "decode.count=2", "Pareto front"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	tab.values[2][1] = "many"
	if _, err := tiFigures(tab, "GPU"); err == nil || !strings.Contains(err.Error(), "results.csv:4: column "+concurrencyColumn) {
		t.Errorf("bad concurrency: got %v, want an error naming results.csv:4 and the column", err)
	}
	tab.interactivity = nil
	if _, err := tiFigures(tab, "GPU"); err == nil || !strings.Contains(err.Error(), "no "+perGPUColumn) {
		t.Errorf("no figure columns: got %v", err)
	}
}

func TestAddTIMeanAveragesReplicas(t *testing.T) {
	var c TICurve
	addTIMean(&c, TIPoint{4, 80, 100}, 1)
	addTIMean(&c, TIPoint{16, 50, 400}, 1)
	addTIMean(&c, TIPoint{4, 60, 200}, 2)
	if want := []TIPoint{{4, 70, 150}, {16, 50, 400}}; !slices.Equal(c.Points, want) {
		t.Errorf("points %v, want %v", c.Points, want)
	}
}

// TestThroughputInteractivityReadable: every point says its concurrency
// (two points that coincide share one label), and the interactivity axis
// spans the data, not 0 to the data: points within 93–115 tok/s get ticks
// at 90 to 120, not at 0 and 50.
func TestThroughputInteractivityReadable(t *testing.T) {
	pts := []TIPoint{{4, 115, 27}, {8, 114.6, 55}, {16, 113.8, 108}, {32, 112.3, 208}, {64, 100.8, 340},
		{128, 95.4, 415}, {256, 95.4, 415}}
	var b bytes.Buffer
	if err := ThroughputInteractivity(&b, SVG, []TICurve{{Name: "one", Points: pts}}, "GPU"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{">c=4<", ">c=64<", ">c=128, 256<", ">90<", ">110<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the SVG", want)
		}
	}
	if strings.Contains(svg, ">50<") {
		t.Error("an interactivity tick at 50: the axis starts far below the data")
	}
}
