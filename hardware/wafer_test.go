package hardware

import (
	"errors"
	"strings"
	"testing"

	"handoff/models/strictyaml"
)

func TestWaferCatalogEntry(t *testing.T) {
	w, err := Default().Accelerator("wse-3")
	if err != nil {
		t.Fatal(err)
	}
	want := Wafer{LayerLatencyNs: 6_730, WidthLatencyNs: 2_500, PrefillEfficiency: 0.45, StagingBps: 100e9,
		PipelineLink: "cs3-ethernet"}
	if w.Wafer != want {
		t.Errorf("wse-3 wafer figures = %+v, want %+v", w.Wafer, want)
	}
	if trn, _ := Default().Accelerator("trainium2"); trn.Wafer != (Wafer{}) {
		t.Errorf("trainium2 has wafer figures %+v", trn.Wafer)
	}
}

func TestWaferParseErrors(t *testing.T) {
	acc := func(kind, extra string) string {
		return "accelerators:\n  - name: x\n    kind: " + kind + "\n    memory: 44GB\n    memory_bandwidth: 21PB/s\n" +
			"    bf16: 1PFLOPS\n    mfu: 0.5\n    mbu: 0.8\n    source: s\n" + extra
	}
	const lat = "    layer_latency: 7us\n    width_latency: 2us\n"
	const full = lat + "    prefill_efficiency: 0.3\n"
	tests := []struct{ name, in, want string }{
		{"ok", acc("wafer", full+"    staging_rate: 50GB/s\n    pipeline_link: cs3-ethernet\n"), ""},
		{"no layer latency", acc("wafer", "    width_latency: 2us\n    prefill_efficiency: 0.3\n"),
			"c.yaml:2: field accelerators[0].layer_latency: required for a wafer"},
		{"no width latency", acc("wafer", "    layer_latency: 7us\n    prefill_efficiency: 0.3\n"),
			"c.yaml:2: field accelerators[0].width_latency: required for a wafer"},
		{"old stage latency", acc("wafer", "    stage_latency: 500us\n"+full), "stage_latency: unknown field"},
		{"no prefill efficiency", acc("wafer", lat),
			"field accelerators[0].prefill_efficiency: required for a wafer and must be in (0, 1]"},
		{"prefill efficiency > 1", acc("wafer", lat+"    prefill_efficiency: 2\n"),
			"c.yaml:12: field accelerators[0].prefill_efficiency: required for a wafer and must be in (0, 1] (a share of mfu), got 2"},
		{"unknown pipeline link", acc("wafer", full+"    pipeline_link: warp\n"),
			`c.yaml:13: field accelerators[0].pipeline_link: unknown link "warp"`},
		{"wafer field on a gpu", acc("gpu", "    staging_rate: 50GB/s\n"),
			"c.yaml:10: field accelerators[0].staging_rate: applies to kind wafer only, not gpu"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in), "c.yaml")
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var fe *strictyaml.FieldError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &fe) {
			t.Errorf("%s: error = %v\nwant %s", tt.name, err, tt.want)
		}
	}
}
