package hardware

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"handoff/models/strictyaml"
)

func TestDefaultCatalog(t *testing.T) {
	c := Default() // panics if the embedded file is broken
	wantAccels := map[string]Kind{
		"h100-sxm": KindGPU, "h200": KindGPU, "b200": KindGPU, "a100-80gb": KindGPU, "mi300x": KindGPU,
		"mi355x": KindGPU, "trainium2": KindTrainium, "wse-3": KindWafer, "groq-lpu": KindLPU,
		"b300": KindGPU, "gb200": KindGPU, "gb300": KindGPU, "h20": KindGPU,
	}
	for name, kind := range wantAccels {
		a, err := c.Accelerator(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if a.Kind != kind || a.Source == "" || a.EfficiencySource == "" {
			t.Errorf("%s: kind %q, source %q, efficiency source %q", name, a.Kind, a.Source, a.EfficiencySource)
		}
		if _, err := c.Link(a.ScaleUpLink); err != nil {
			t.Errorf("%s: scale-up link: %v", name, err)
		}
		if _, err := c.Link(a.ScaleOutLink); a.ScaleOutLink != "" && err != nil {
			t.Errorf("%s: scale-out link: %v", name, err)
		}
		if a.CostPerHour <= 0 || a.PowerW <= 0 {
			t.Errorf("%s: cost %v power %v", name, a.CostPerHour, a.PowerW)
		}
	}
	wantLinks := map[string]float64{ // per direction, bytes/s
		"nvlink4": 450e9, "nvlink5": 900e9, "nvlink3": 300e9, "ib-ndr": 50e9, "roce-400g": 50e9,
		"tcp-100g": 12.5e9, "pcie-gen5-x16": 64e9, "efa": 25e9, "infinity-fabric": 448e9, "neuronlink-v3": 640e9,
		"cx7-400g": 50e9, "cx8-800g": 100e9, "pollara-400g": 50e9, "infinity-fabric-4": 7 * 153.6e9 / 2,
	}
	for name, bw := range wantLinks {
		l, err := c.Link(name)
		if err != nil || l.BandwidthBps != bw || l.Source == "" {
			t.Errorf("link %s = %+v, %v; want %v B/s", name, l, err, bw)
		}
	}
}

func TestDefaultFigures(t *testing.T) {
	c := Default()
	h100, _ := c.Accelerator("H100-SXM") // case-insensitive
	// The datasheet figures; the fitted factors are the calibration's to
	// check (cmd/handoff TestCalibrationDocIsCurrent).
	want := Accelerator{
		Name: "h100-sxm", Kind: KindGPU, Arch: ArchHopper, MemoryBytes: 80e9, MemoryBandwidthBps: 3.35e12,
		BF16FLOPS: 989.5e12, FP8FLOPS: 1979e12, MFU: h100.MFU, MBU: h100.MBU, StepOverheadNs: h100.StepOverheadNs,
		ScaleUpLink: "nvlink4", ScaleUpDomain: 8, ScaleOutLink: "cx7-400g", PowerW: 700, CostPerHour: 3.0,
		Source: h100.Source, EfficiencySource: h100.EfficiencySource, Serving: h100.Serving,
	}
	if h100 != want {
		t.Errorf("h100 = %+v\nwant %+v", h100, want)
	}
	wse, _ := c.Accelerator("wse-3")
	if wse.MemoryBytes != 44e9 || wse.MemoryBandwidthBps != 21e15 {
		t.Errorf("wse-3 = %+v", wse)
	}
	trn, _ := c.Accelerator("trainium2")
	if trn.MemoryBytes != 96*(1<<30) { // 103079215104 B
		t.Errorf("trainium2 memory = %v", trn.MemoryBytes)
	}
	a100, _ := c.Accelerator("a100-80gb")
	if a100.FP8FLOPS != 0 {
		t.Errorf("a100 fp8 = %v, want 0 (unsupported)", a100.FP8FLOPS)
	}
	for name, want := range map[string]int{"h100-sxm": 8, "h200": 8, "b200": 8, "a100-80gb": 8, "mi300x": 8,
		"trainium2": 16, "wse-3": 0, "groq-lpu": 0, "b300": 8, "gb200": 72, "gb300": 72, "h20": 8} {
		if a, _ := c.Accelerator(name); a.ScaleUpDomain != want || want > 0 && !strings.Contains(a.Source, "scale_up_domain") {
			t.Errorf("%s scale_up_domain = %d, want %d with its source", name, a.ScaleUpDomain, want)
		}
	}
	// Dense FP4 peaks (0 = none) and scale-out NICs, as catalog.yaml gives them.
	for name, want := range map[string]struct {
		fp4 float64
		out string
	}{"h100-sxm": {0, "cx7-400g"}, "h200": {0, "cx7-400g"}, "h20": {0, "cx7-400g"}, "b200": {9e15, "cx7-400g"},
		"b300": {13.5e15, "cx8-800g"}, "gb200": {10e15, "cx7-400g"}, "gb300": {15e15, "cx8-800g"},
		"mi355x": {10066e12, "pollara-400g"}, "mi300x": {0, ""}} {
		if a, _ := c.Accelerator(name); a.FP4FLOPS != want.fp4 || a.ScaleOutLink != want.out || a.PeakFLOPS("fp4") != want.fp4 {
			t.Errorf("%s fp4 %v scale-out %q, want %v %q", name, a.FP4FLOPS, a.ScaleOutLink, want.fp4, want.out)
		}
	}
	tcp, _ := c.Link("tcp-100g")
	if tcp.LatencyNs != 1e6 {
		t.Errorf("tcp latency = %d", tcp.LatencyNs)
	}
}

func TestListingSortedAndUnknown(t *testing.T) {
	c := Default()
	as := c.Accelerators()
	for i := 1; i < len(as); i++ {
		if as[i-1].Name >= as[i].Name {
			t.Fatalf("accelerators not sorted: %s, %s", as[i-1].Name, as[i].Name)
		}
	}
	ls := c.Links()
	for i := 1; i < len(ls); i++ {
		if ls[i-1].Name >= ls[i].Name {
			t.Fatalf("links not sorted: %s, %s", ls[i-1].Name, ls[i].Name)
		}
	}
	_, err := c.Accelerator("h100")
	if err == nil || !strings.Contains(err.Error(), `unknown accelerator "h100" (known: a100-80gb, b200, b300, gb200, gb300, groq-lpu, h100-sxm, h20,`) {
		t.Errorf("unknown accelerator error = %v", err)
	}
	_, err = c.Link("nvlink9")
	if err == nil || !strings.Contains(err.Error(), "(known: cs3-ethernet, cx7-400g, cx8-800g, efa,") {
		t.Errorf("unknown link error = %v", err)
	}
}

const userFile = `accelerators:
  - name: My-GPU
    kind: gpu
    memory: 48GB
    memory_bandwidth: 1TB/s
    bf16: 400TFLOPS
    mfu: 0.4
    mbu: 0.7
    step_overhead: 1ms
    scale_up: nvlink4
    power_w: 300
    cost_per_hour: 1
    source: "test"
  - name: h100-sxm
    kind: gpu
    memory: 80GB
    memory_bandwidth: 3TB/s
    bf16: 900TFLOPS
    mfu: 0.6
    mbu: 0.9
    step_overhead: 0
    scale_up: fast
    power_w: 700
    cost_per_hour: 2
    source: "override"
links:
  - {name: fast, bandwidth: 1TB/s, latency: 500ns, source: "test"}
`

func TestParseAndMerge(t *testing.T) {
	user, err := Parse([]byte(userFile), "user.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := Default()
	m := def.Merge(user)
	g, err := m.Accelerator("my-gpu")
	if err != nil || g.Name != "my-gpu" || g.MemoryBytes != 48e9 || g.StepOverheadNs != 1e6 {
		t.Errorf("my-gpu = %+v, %v", g, err)
	}
	h, _ := m.Accelerator("h100-sxm")
	if h.MemoryBandwidthBps != 3e12 || h.ScaleUpLink != "fast" {
		t.Errorf("override not applied: %+v", h)
	}
	if h0, _ := def.Accelerator("h100-sxm"); h0.MemoryBandwidthBps != 3.35e12 {
		t.Error("Merge changed its receiver")
	}
	if len(m.Links()) != len(def.Links())+1 || len(m.Accelerators()) != len(def.Accelerators())+1 {
		t.Errorf("merged sizes: %d links, %d accelerators", len(m.Links()), len(m.Accelerators()))
	}
	m.AddLink(Link{Name: "Extra", BandwidthBps: 1})
	m.AddAccelerator(Accelerator{Name: "X1"})
	if _, err := m.Link("extra"); err != nil {
		t.Error(err)
	}
	if _, err := m.Accelerator("x1"); err != nil {
		t.Error(err)
	}
}

// TestMarshalRoundTrip checks that the default catalog, written back as YAML
// and parsed again, is unchanged.
func TestMarshalRoundTrip(t *testing.T) {
	c := Default()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(data, "out.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, again) {
		t.Errorf("round trip changed the catalog:\n%s", data)
	}
}

// TestBorrowedFactors: an accelerator with factors_from takes the lender's
// unset efficiency and serving fields, keeps the ones it sets, and says it
// is unfitted; the lender may live in the default catalog.
func TestBorrowedFactors(t *testing.T) {
	h100, err := Default().Accelerator("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	in := "accelerators:\n  - name: x\n    kind: gpu\n    memory: 80GB\n    memory_bandwidth: 3TB/s\n" +
		"    bf16: 1PFLOPS\n    mfu: 0.5\n    step_per_seq: 7us\n    factors_from: h100-sxm\n    source: s\n"
	c, err := Parse([]byte(in), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := c.Accelerator("x")
	want := h100.Serving
	want.StepPerSeqNs = 7000
	switch {
	case x.MFU != 0.5 || x.MBU != h100.MBU || x.StepOverheadNs != h100.StepOverheadNs:
		t.Errorf("mfu %g mbu %g overhead %d; want 0.5, %g, %d", x.MFU, x.MBU, x.StepOverheadNs, h100.MBU, h100.StepOverheadNs)
	case x.Serving != want:
		t.Errorf("serving %+v, want %+v", x.Serving, want)
	case x.Fitted() != "unfitted: factors borrowed from h100-sxm" || h100.Fitted() != "":
		t.Errorf("Fitted() = %q / %q", x.Fitted(), h100.Fitted())
	}
}

func TestParseErrors(t *testing.T) {
	acc := func(extra string) string {
		return "accelerators:\n  - name: x\n    kind: gpu\n    memory: 80GB\n    memory_bandwidth: 3TB/s\n" +
			"    bf16: 1PFLOPS\n    mfu: 0.5\n    mbu: 0.8\n    step_overhead: 2ms\n    source: s\n" + extra
	}
	tests := []struct{ name, in, want string }{
		{"ok", acc(""), ""},
		{"misspelt", acc("    scale_upp: nvlink4\n"), "c.yaml:11: field accelerators[0].scale_upp: unknown field (did you mean scale_up?)"},
		{"bad kind", strings.Replace(acc(""), "kind: gpu", "kind: tpu", 1), "c.yaml:3: field accelerators[0].kind: want one of gpu, trainium, wafer, lpu"},
		{"zero memory", strings.Replace(acc(""), "80GB", "0GB", 1), "c.yaml:4: field accelerators[0].memory: must be positive"},
		{"missing bandwidth", strings.Replace(acc(""), "    memory_bandwidth: 3TB/s\n", "", 1), "c.yaml:2: field accelerators[0].memory_bandwidth: must be positive"},
		{"mfu > 1", strings.Replace(acc(""), "mfu: 0.5", "mfu: 1.5", 1), "c.yaml:7: field accelerators[0].mfu: must be in (0, 1]"},
		{"mbu 0", strings.Replace(acc(""), "mbu: 0.8", "mbu: 0", 1), "field accelerators[0].mbu: must be in (0, 1]"},
		{"bare number", strings.Replace(acc(""), "80GB", "80", 1), `c.yaml:4: field accelerators[0].memory: bad bytes "80"`},
		{"unknown link", acc("    scale_up: warp\n"), `c.yaml:11: field accelerators[0].scale_up: unknown link "warp" (known: cs3-ethernet,`},
		{"unknown scale-out", acc("    scale_out: warp\n"), `c.yaml:11: field accelerators[0].scale_out: unknown link "warp" (known: cs3-ethernet,`},
		{"scale-out in the default catalog", acc("    scale_out: ib-ndr\n"), ""},
		{"negative fp4", acc("    fp4: -1PFLOPS\n"), `field accelerators[0].fp4:`},
		{"negative domain", acc("    scale_up_domain: -8\n"), "c.yaml:11: field accelerators[0].scale_up_domain: must be in [0, 65536] devices"},
		{"decimal domain", acc("    scale_up_domain: 7.5\n"), `c.yaml:11: field accelerators[0].scale_up_domain: want an integer, got "7.5"`},
		{"no source", strings.Replace(acc(""), "    source: s\n", "", 1), "field accelerators[0].source: required"},
		{"bad name", strings.Replace(acc(""), "name: x", "name: a b", 1), `c.yaml:2: field accelerators[0].name: "a b": use letters`},
		{"duplicate", acc("") + "  - name: X\n    kind: gpu\n    memory: 1GB\n    memory_bandwidth: 1TB/s\n    bf16: 1PFLOPS\n    mfu: 0.5\n    mbu: 0.8\n    source: s\n",
			`c.yaml:11: field accelerators[1].name: duplicate accelerator "x"`},
		{"link zero bandwidth", "links:\n  - {name: l, bandwidth: 0GB/s, latency: 1us, source: s}\n", "c.yaml:2: field links[0].bandwidth: must be positive"},
		{"link bad latency", "links:\n  - {name: l, bandwidth: 1GB/s, latency: 1, source: s}\n", `c.yaml:2: field links[0].latency: bad duration "1"`},
		{"empty", "", "c.yaml: empty document"},
		{"unknown lender", acc("    factors_from: nope\n"), `c.yaml:11: field accelerators[0].factors_from: unknown accelerator "nope"`},
		{"lender borrows", acc("    factors_from: h200\n"), `field accelerators[0].factors_from: "h200" does not have factors of its own`},
		{"negative serving", acc("    step_per_seq: -1us\n"), `field accelerators[0].step_per_seq: bad duration "-1us"`},
		{"decode mfu > 1", acc("    decode_mfu: 2\n"), "field accelerators[0].decode_mfu: must be in (0, 1]"},
		{"unknown arch", acc("    arch: sm70\n"), "c.yaml:11: field accelerators[0].arch: want one of sm80, sm90, sm100, cdna3, cdna4"},
		{"arch", acc("    arch: SM90\n"), ""},
		{"old moe floor", acc("    moe_layer_floor: 100us\n"), "c.yaml:11: field accelerators[0].moe_layer_floor: unknown field"},
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
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) && !strings.Contains(err.Error(), tt.want) || !errors.As(err, &fe) {
			t.Errorf("%s: error = %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// TestPeakFLOPS: each tensor-core format reads its own peak, 0 where the
// device lacks it or the format is unknown.
func TestPeakFLOPS(t *testing.T) {
	a := Accelerator{BF16FLOPS: 1, FP8FLOPS: 2, FP4FLOPS: 4}
	for format, want := range map[string]float64{"bf16": 1, "fp8": 2, "fp4": 4, "fp16": 0, "": 0} {
		if got := a.PeakFLOPS(format); got != want {
			t.Errorf("PeakFLOPS(%q) = %v, want %v", format, got, want)
		}
	}
	if got := (Accelerator{BF16FLOPS: 1}).PeakFLOPS("fp4"); got != 0 {
		t.Errorf("no FP4: PeakFLOPS(fp4) = %v, want 0", got)
	}
}

func TestResolveLink(t *testing.T) {
	l, err := LinkSpec{Name: " IB ", Bandwidth: 50e9, Latency: 2000}.Resolve()
	if err != nil || l != (Link{Name: "ib", BandwidthBps: 50e9, LatencyNs: 2000}) {
		t.Errorf("Resolve = %+v, %v", l, err)
	}
	if _, err := (LinkSpec{Name: "x", Bandwidth: 1, Latency: -1}).Resolve(); err == nil {
		t.Error("negative latency accepted")
	}
}

// FuzzParse checks that Parse never panics and reports every error as a
// located *strictyaml.FieldError.
func FuzzParse(f *testing.F) {
	f.Add(userFile)
	f.Add(string(embeddedCatalog))
	f.Add("links:\n  - {name: l, bandwidth: 1GB/s, latency: 1us, source: s}\n")
	f.Add("accelerators: [{name: a, kind: wafer}]\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse([]byte(in), "f.yaml")
		if err != nil {
			var fe *strictyaml.FieldError
			if !errors.As(err, &fe) || fe.File != "f.yaml" {
				t.Fatalf("error %v (%T) not located", err, err)
			}
			return
		}
		for _, a := range c.Accelerators() {
			if !(a.MemoryBytes > 0 && a.MFU > 0 && a.MFU <= 1) {
				t.Fatalf("invalid accelerator accepted: %+v", a)
			}
		}
	})
}
