package scenarios

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/models/network"
	"handoff/sim"
)

// topoBase is a valid scenario with a two-datacenter topology; the tests
// edit it by replacing text, so its line numbers matter: the comments give
// them.
const topoBase = `name: t
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms}
workload:
  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 10/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}
topology:
  domain_link: nvlink4
  node_link: ib-ndr
  datacenter_link: tcp-100g
  datacenters: [east, west]
  domain_size: 8
pools:
  - name: prefill
    role: prefill
    count: 2
    hardware: h100-sxm
    placement: {datacenter: east, domain: d0}
  - name: decode
    role: decode
    count: 2
    hardware: h100-sxm
    tp: 2
    placement: {datacenter: west, rule: spread}
`

// Lines of topoBase: 10 topology, 11 domain_link, 12 node_link,
// 13 datacenter_link, 14 datacenters, 15 domain_size, 16 pools,
// 17-21 prefill (21 placement), 22-27 decode (26 tp, 27 placement).

// topoEdit returns topoBase with old replaced by new, failing if old is absent.
func topoEdit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(topoBase, old) {
		t.Fatalf("topoBase has no %q", old)
	}
	return strings.Replace(topoBase, old, new, 1)
}

// linkNames returns the names of the links from src to dst.
func linkNames(topo *network.Topology, src, dst int) []string {
	links, _ := topo.Path(src, dst)
	var out []string
	for _, l := range links {
		out = append(out, topo.Names[l])
	}
	return out
}

func TestTopologyBuildsHierarchy(t *testing.T) {
	_, b, err := parseBuild(t, topoBase, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	topo := b.Config.Topology
	// Instances: prefill-0, prefill-1 (east, d0), decode-0, decode-1 (west,
	// one domain each).
	if got := topo.Level(0, 1); got != network.LevelDomain {
		t.Errorf("prefill-0 → prefill-1 at level %v, want domain", got)
	}
	want := []string{"prefill-0/scaleout-egress", "dc:east/wan-egress", "dc:west/wan-ingress", "decode-1/scaleout-ingress"}
	if got := linkNames(topo, 0, 3); !slices.Equal(got, want) {
		t.Errorf("prefill-0 → decode-1 crosses %v, want %v", got, want)
	}
	// decode-0 and decode-1 share no domain: no domain links; their NICs
	// carry tp 2 × 50 GB/s.
	for l, name := range topo.Names {
		if strings.HasPrefix(name, "decode-") && strings.Contains(name, "domain") {
			t.Errorf("link %s exists though decode instances are alone in their domains", name)
		}
		if strings.HasPrefix(name, "decode-") && topo.Caps[l] != 100e9 {
			t.Errorf("%s: %g B/s, want 100e9", name, topo.Caps[l])
		}
	}
}

func TestNamedDomainIsSharedAcrossPools(t *testing.T) {
	doc := topoEdit(t, "placement: {datacenter: west, rule: spread}", "placement: {datacenter: east, domain: d0}")
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prefill-0/domain-egress", "decode-0/domain-ingress"}
	if got := linkNames(b.Config.Topology, 0, 2); !slices.Equal(got, want) {
		t.Fatalf("prefill-0 → decode-0 crosses %v, want %v", got, want)
	}
}

func TestTopologyDefaults(t *testing.T) {
	doc := strings.Replace(base, "pools:\n", "topology: {}\npools:\n", 1)
	l, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := *l.Topology
	if got.DomainLink != "nvlink4" || got.NodeLink != "ib-ndr" || got.DatacenterLink != "tcp-100g" ||
		got.DomainSize != 8 || got.Datacenters != nil {
		t.Errorf("topology %+v, want nvlink4, ib-ndr, tcp-100g, 8 GPUs, no datacenter names", got)
	}
	if p := l.Pools[1].Placement; p == nil || *p != (Placement{Rule: "pack"}) {
		t.Errorf("decode placement %+v, want {rule: pack}", p)
	}
	if l.Link.Kind != "" {
		t.Errorf("link.kind defaulted to %q beside a topology", l.Link.Kind)
	}
	// Pools pack separately: prefill-0 alone, decode-0 and -1 together, so
	// prefill → decode crosses IB.
	if got := b.Config.Topology.Level(0, 1); got != network.LevelDatacenter {
		t.Errorf("prefill-0 → decode-0 at level %v, want datacenter", got)
	}
	if got := b.Config.Topology.Level(1, 2); got != network.LevelDomain {
		t.Errorf("decode-0 → decode-1 at level %v, want domain", got)
	}
}

func TestTopologyEffectiveLoadsToItself(t *testing.T) {
	for _, doc := range []string{topoBase, strings.Replace(base, "pools:\n", "topology: {}\npools:\n", 1)} {
		l, err := Parse([]byte(doc), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.Effective("")
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, "t.yaml")
		if err != nil {
			t.Fatalf("effective scenario does not load: %v\n%s", err, out)
		}
		out2, _ := again.Effective("")
		if string(out) != string(out2) {
			t.Fatalf("effective scenario changed on reload:\n%s\nthen\n%s", out, out2)
		}
	}
}

func TestWithoutTopologyEveryPairCrossesOneNIC(t *testing.T) {
	_, b, err := parseBuild(t, base, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := linkNames(b.Config.Topology, 0, 1); !slices.Equal(got, []string{"prefill-0/egress", "decode-0/ingress"}) {
		t.Fatalf("prefill-0 → decode-0 crosses %v", got)
	}
}

func TestTopologyScenarioRuns(t *testing.T) {
	_, b, err := parseBuild(t, topoBase, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	var wanBytes float64
	for _, l := range res.Links {
		if l.Name == "dc:east/wan-egress" {
			wanBytes = l.Stats.Bytes
		}
	}
	if !(wanBytes > 0) {
		t.Fatalf("no bytes left east over the WAN; links: %+v", res.Links)
	}
}

func TestTopologyErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"unknown datacenter", topoEdit(t, "datacenter: west", "datacenter: north"),
			[]string{`t.yaml:27: field pools[1].placement.datacenter: unknown datacenter "north" (known: east, west)`}},
		{"datacenter without names", topoEdit(t, "  datacenters: [east, west]\n", ""),
			[]string{`t.yaml:20: field pools[0].placement.datacenter: unknown datacenter "east": topology.datacenters names none`}},
		{"unknown link", topoEdit(t, "node_link: ib-ndr", "node_link: ib-xdr"),
			[]string{`t.yaml:12: field topology.node_link: unknown link "ib-xdr"`}},
		{"empty link", topoEdit(t, "domain_link: nvlink4", `domain_link: ""`),
			[]string{"t.yaml:11: field topology.domain_link: required"}},
		{"over-filled domain", topoEdit(t, "count: 2\n    hardware: h100-sxm\n    placement", "count: 9\n    hardware: h100-sxm\n    placement"),
			[]string{`t.yaml:21: field pools[0].placement.domain: domain "d0" would hold 9 GPUs`, "domain size of 8"}},
		{"domain and rule", topoEdit(t, "placement: {datacenter: west, rule: spread}", "placement: {datacenter: east, domain: d0, rule: pack}"),
			[]string{"t.yaml:27: field pools[1].placement: give either domain or rule, not both"}},
		{"shared domain over-filled", topoEdit(t, "tp: 2\n    placement: {datacenter: west, rule: spread}", "tp: 4\n    placement: {datacenter: east, domain: d0}"),
			[]string{`t.yaml:27: field pools[1].placement.domain: domain "d0" would hold 10 GPUs (2 already placed)`}},
		{"unknown rule", topoEdit(t, "rule: spread", "rule: scatter"),
			[]string{`t.yaml:27: field pools[1].placement.rule: unknown rule "scatter" (known: pack, spread)`}},
		{"instance larger than a domain", topoEdit(t, "tp: 2", "tp: 16"),
			[]string{"t.yaml:26: field pools[1].tp: an instance of 16 GPUs does not fit in a domain of 8"}},
		{"link beside topology", topoBase + "link: {kind: nvlink4}\n",
			[]string{"t.yaml:28: field link: give either link", "or topology, not both"}},
		{"placement without topology", edit(t, "count: 2", "count: 2\n    placement: {rule: pack}"),
			[]string{"t.yaml:18: field pools[1].placement: needs a top-level topology"}},
		{"duplicate datacenter", topoEdit(t, "[east, west]", "[east, east]"),
			[]string{`t.yaml:14: field topology.datacenters[1]: duplicate datacenter "east"`}},
		{"empty datacenter name", topoEdit(t, "[east, west]", `[east, " "]`),
			[]string{"t.yaml:14: field topology.datacenters[1]: a datacenter name must not be empty"}},
		{"zero domain size", topoEdit(t, "domain_size: 8", "domain_size: 0"),
			[]string{"t.yaml:15: field topology.domain_size: must be in [1, 1024] GPUs, got 0"}},
		{"misspelt key", topoEdit(t, "domain_size: 8", "domain_sise: 8"),
			[]string{"t.yaml:15: field topology.domain_sise: unknown field (did you mean domain_size?)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refuses(t, tt.doc, tt.want...) })
	}
}

// FuzzTopology feeds variants of the topology scenario to Parse and Build:
// errors are fine, panics and multi-line errors are not.
func FuzzTopology(f *testing.F) {
	f.Add([]byte(topoBase))
	f.Add([]byte(strings.Replace(base, "pools:\n", "topology: {datacenters: [a, b], domain_size: 72}\npools:\n", 1)))
	f.Add([]byte(strings.Replace(topoBase, "rule: spread", "rule: pack", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, filepath.Join("testdata", "fuzz.yaml"))
		if err == nil {
			var b *Built
			if b, err = l.Build(); err == nil {
				b.Close()
			}
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans several lines:\n%v", err)
		}
	})
}

// TestAutoscaledPoolIsPlacedToItsMax: an autoscaled pool is built at its
// max, so every instance it may start has a place — the extra ones by the
// pool's rule after those of its count, or in its named domain, which must
// hold them all. The run then scales up into them.
func TestAutoscaledPoolIsPlacedToItsMax(t *testing.T) {
	scaled := "tp: 2\n    autoscale: {policy: schedule, min: 1, max: 4, interval: 50ms, schedule: [{at: 100ms, count: 4}]}\n    placement"
	tests := []struct {
		name, placement string
		together        bool // the four decode instances share a domain (else each has its own)
	}{
		{"spread", "placement: {datacenter: west, rule: spread}", false},
		{"pack", "placement: {datacenter: west, rule: pack}", true}, // 4 × tp 2 fill a domain of 8
		{"named", "placement: {datacenter: west, domain: w0}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(topoEdit(t, "tp: 2\n    placement", scaled),
				"placement: {datacenter: west, rule: spread}", tt.placement, 1)
			_, b, err := parseBuild(t, doc, "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(b.Config.Instances); n != 6 {
				t.Fatalf("%d instances, want 2 prefill + 4 decode", n)
			}
			topo := b.Config.Topology
			for k := 1; k < 4; k++ {
				if got := topo.Level(2, 2+k); (got == network.LevelDomain) != tt.together {
					t.Errorf("decode-0 → decode-%d at level %v; want them together in a domain: %v", k, got, tt.together)
				}
			}
			res, err := sim.Run(b.Config)
			if err != nil {
				t.Fatal(err)
			}
			served := false // by an instance beyond the count
			for _, r := range res.Records {
				served = served || r.DecodeInstance >= 4
			}
			if len(res.ScaleUpsNs) != 2 || !served {
				t.Errorf("%d scale-ups, want 2; decode-2 or -3 served a request: %v", len(res.ScaleUpsNs), served)
			}
		})
	}
}

// TestAutoscaledPoolFromTheIssue: a P/D scenario with a default topology
// and a decode pool autoscaled above its count builds (it used to panic
// with names and places of different lengths).
func TestAutoscaledPoolFromTheIssue(t *testing.T) {
	doc := edit(t, "  - name: decode\n    role: decode\n    count: 2\n",
		"  - name: decode\n    role: decode\n    count: 1\n    autoscale: {policy: fixed, min: 1, max: 2}\n")
	doc = strings.Replace(doc, "pools:\n", "topology: {}\npools:\n", 1)
	if _, _, err := parseBuild(t, doc, "t.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestAutoscaledPoolOverfillsNamedDomain: a named domain must hold the
// pool's max, not its count, and the error says so.
func TestAutoscaledPoolOverfillsNamedDomain(t *testing.T) {
	doc := topoEdit(t, "tp: 2\n    placement: {datacenter: west, rule: spread}",
		"tp: 2\n    autoscale: {policy: fixed, min: 1, max: 5}\n    placement: {datacenter: west, domain: w0}")
	_, _, err := parseBuild(t, doc, "t.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	checkError(t, err, `t.yaml:28: field pools[1].placement.domain: domain "w0" would hold 10 GPUs`,
		"the pool autoscales up to max 5 instances, and each needs a place")
}
