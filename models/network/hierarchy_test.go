package network

import (
	"slices"
	"testing"

	"handoff/hardware"
)

// The catalog's figures, per direction: NVLink4 450 GB/s and 1 µs, IB NDR
// 50 GB/s and 2 µs, TCP between datacenters 12.5 GB/s and 1 ms.
var (
	nvlink = hardware.Link{Name: "nvlink4", BandwidthBps: 450e9, LatencyNs: 1_000}
	ib     = hardware.Link{Name: "ib-ndr", BandwidthBps: 50e9, LatencyNs: 2_000}
	tcp    = hardware.Link{Name: "tcp-100g", BandwidthBps: 12.5e9, LatencyNs: 1_000_000}
	twoDCs = Hierarchy{Domain: nvlink, ScaleOut: ib, WAN: tcp, Datacenters: []string{"east", "west"}}
)

// fourInstances: a and b share domain 0 in east, c is alone in domain 1 in
// east, d is in west.
func fourInstances() *Topology {
	return NewHierarchy(twoDCs, []string{"a", "b", "c", "d"}, []Place{
		{Datacenter: 0, Domain: 0, GPUs: 1}, {Datacenter: 0, Domain: 0, GPUs: 1},
		{Datacenter: 0, Domain: 1, GPUs: 1}, {Datacenter: 1, Domain: 2, GPUs: 1},
	})
}

// pathNames returns the names of the links from src to dst.
func pathNames(t *Topology, src, dst int) []string {
	links, _ := t.Path(src, dst)
	var out []string
	for _, l := range links {
		out = append(out, t.Names[l])
	}
	return out
}

func TestPathFollowsLowestCommonLevel(t *testing.T) {
	topo := fourInstances()
	tests := []struct {
		name      string
		src, dst  int
		level     Level
		links     []string
		latencyNs int64
	}{
		{"same domain: NVLink", 0, 1, LevelDomain, []string{"a/domain-egress", "b/domain-ingress"}, 1_000},
		{"same datacenter: IB", 0, 2, LevelDatacenter, []string{"a/scaleout-egress", "c/scaleout-ingress"}, 2_000},
		// Latency: IB 2 µs + TCP 1 ms.
		{"other datacenter: TCP WAN", 2, 3, LevelWAN,
			[]string{"c/scaleout-egress", "dc:east/wan-egress", "dc:west/wan-ingress", "d/scaleout-ingress"}, 1_002_000},
		{"back east", 3, 1, LevelWAN,
			[]string{"d/scaleout-egress", "dc:west/wan-egress", "dc:east/wan-ingress", "b/scaleout-ingress"}, 1_002_000},
		{"itself: nothing", 2, 2, LevelDomain, nil, 1_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, lat := topo.Path(tt.src, tt.dst)
			if got := pathNames(topo, tt.src, tt.dst); !slices.Equal(got, tt.links) {
				t.Errorf("links %v, want %v", got, tt.links)
			}
			if lat != tt.latencyNs {
				t.Errorf("latency %d ns, want %d", lat, tt.latencyNs)
			}
			if got := topo.Level(tt.src, tt.dst); got != tt.level {
				t.Errorf("level %v, want %v", got, tt.level)
			}
		})
	}
}

func TestOnlyCrossableLinksExist(t *testing.T) {
	// a, b: domain links (they share one) and scale-out (east has two
	// domains); c: scale-out only; d: scale-out only (two datacenters).
	want := []string{
		"a/domain-egress", "a/domain-ingress", "a/scaleout-egress", "a/scaleout-ingress",
		"b/domain-egress", "b/domain-ingress", "b/scaleout-egress", "b/scaleout-ingress",
		"c/scaleout-egress", "c/scaleout-ingress", "d/scaleout-egress", "d/scaleout-ingress",
		"dc:east/wan-egress", "dc:east/wan-ingress", "dc:west/wan-egress", "dc:west/wan-ingress",
	}
	if got := fourInstances().Names; !slices.Equal(got, want) {
		t.Fatalf("links\n%v\nwant\n%v", got, want)
	}
	one := NewHierarchy(Hierarchy{Domain: nvlink, ScaleOut: ib, WAN: tcp, Datacenters: []string{""}},
		[]string{"p", "d"}, []Place{{0, 0, 1}, {0, 0, 1}})
	if want := []string{"p/domain-egress", "p/domain-ingress", "d/domain-egress", "d/domain-ingress"}; !slices.Equal(one.Names, want) {
		t.Fatalf("one domain: links %v, want %v", one.Names, want)
	}
}

func TestLinkBandwidthScalesWithGPUs(t *testing.T) {
	topo := NewHierarchy(twoDCs, []string{"p", "d"}, []Place{{0, 0, 8}, {1, 1, 2}})
	// p: 8 × 50 GB/s NICs; d: 2 × 50; the WAN is per datacenter.
	want := []float64{400e9, 400e9, 100e9, 100e9, 12.5e9, 12.5e9, 12.5e9, 12.5e9}
	if !slices.Equal(topo.Caps, want) {
		t.Fatalf("caps %v, want %v", topo.Caps, want)
	}
}

// transfer starts one transfer per (src, dst) pair over topo at t=0 and
// returns each one's completion time.
func transfers(t *testing.T, topo *Topology, bytes float64, pairs ...[2]int) []int64 {
	t.Helper()
	n := New(topo.Caps)
	for i, p := range pairs {
		links, lat := topo.Path(p[0], p[1])
		n.Start(int32(i), links, lat, bytes, 0)
	}
	doneAt := make([]int64, len(pairs))
	for n.Active() > 0 {
		now := n.NextNs()
		for _, ref := range n.Advance(now, nil) {
			doneAt[ref] = now
		}
	}
	return doneAt
}

func TestTransferTimesByLevel(t *testing.T) {
	topo := fourInstances()
	// 9e6 B: NVLink 9e6/450 = 20,000 ns + 1 µs; IB 9e6/50 = 180,000 ns
	// + 2 µs; WAN 9e6/12.5 = 720,000 ns + 1,002 µs.
	got := []int64{transfers(t, topo, 9e6, [2]int{0, 1})[0], transfers(t, topo, 9e6, [2]int{0, 2})[0],
		transfers(t, topo, 9e6, [2]int{0, 3})[0]}
	if want := []int64{21_000, 182_000, 1_722_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
}

func TestCrossDatacenterTransfersShareTheWAN(t *testing.T) {
	// a and c (east, different domains) send to d and e (west, different
	// domains): no NIC is shared, only east's WAN egress and west's WAN
	// ingress at 12.5 GB/s, 6.25 each: 9e6/6.25 = 1,440,000 ns + 1,002 µs.
	topo := NewHierarchy(twoDCs, []string{"a", "c", "d", "e"},
		[]Place{{0, 0, 1}, {0, 1, 1}, {1, 2, 1}, {1, 3, 1}})
	got := transfers(t, topo, 9e6, [2]int{0, 2}, [2]int{1, 3})
	if want := []int64{2_442_000, 2_442_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
	// Within east the same two senders do not slow each other: 9e6/50
	// = 180,000 ns + 2 µs each.
	got = transfers(t, topo, 9e6, [2]int{0, 1}, [2]int{1, 0})
	if want := []int64{182_000, 182_000}; !slices.Equal(got, want) {
		t.Fatalf("within east: done at %v, want %v", got, want)
	}
}

func TestNewHierarchyPanicsOnProgrammerErrors(t *testing.T) {
	for name, places := range map[string][]Place{
		"datacenter": {{Datacenter: 2, GPUs: 1}},
		"gpus":       {{GPUs: 0}},
		"lengths":    {{GPUs: 1}, {GPUs: 1}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			NewHierarchy(twoDCs, []string{"x"}, places)
		}()
	}
}

func TestNICTopologyIsOneLevel(t *testing.T) {
	topo := NewNICTopology(ib, []string{"p", "d"}, []int{1, 1})
	if want := []string{"p/egress", "p/ingress", "d/egress", "d/ingress"}; !slices.Equal(topo.Names, want) {
		t.Fatalf("links %v, want %v", topo.Names, want)
	}
	for _, pair := range [][2]int{{0, 1}, {1, 0}, {0, 0}} {
		links, lat := topo.Path(pair[0], pair[1])
		want := []int32{int32(2 * pair[0]), int32(2*pair[1] + 1)}
		if !slices.Equal(links, want) || lat != 2_000 || topo.Level(pair[0], pair[1]) != LevelDomain {
			t.Errorf("%v: links %v latency %d, want %v and 2000", pair, links, lat, want)
		}
	}
}

func TestTwoTransfersIntoOneInstanceShareItsNIC(t *testing.T) {
	// a and b (domain 0) both send 9e6 B to c (domain 1) over IB: c's
	// ingress at 50 GB/s gives 25 each, 360,000 ns + 2 µs: twice one alone.
	got := transfers(t, fourInstances(), 9e6, [2]int{0, 2}, [2]int{1, 2})
	if want := []int64{362_000, 362_000}; !slices.Equal(got, want) {
		t.Fatalf("done at %v, want %v", got, want)
	}
}

// BenchmarkNewHierarchy builds the largest topology a scenario allows:
// 16,384 instances, 8 to a domain, half in each of two datacenters.
func BenchmarkNewHierarchy(b *testing.B) {
	names := make([]string, 16384)
	places := make([]Place, 16384)
	for i := range places {
		names[i] = "i"
		places[i] = Place{Datacenter: i % 2, Domain: i / 8, GPUs: 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		NewHierarchy(twoDCs, names, places)
	}
}

// TestAppendPathAppendsWithoutAllocating checks AppendPath's contract: it
// appends after what links holds, and allocates nothing when links has
// room — a path is worked out, not looked up in a table of every pair.
func TestAppendPathAppendsWithoutAllocating(t *testing.T) {
	topo := fourInstances()
	links, lat := topo.AppendPath([]int32{7}, 2, 3)
	want, wantNs := topo.Path(2, 3)
	if !slices.Equal(links, append([]int32{7}, want...)) || lat != wantNs || len(want) != 4 {
		t.Fatalf("appended %v (%d ns) after 7, want %v (%d ns)", links, lat, want, wantNs)
	}
	buf := make([]int32, 0, 4)
	if n := testing.AllocsPerRun(100, func() { buf, _ = topo.AppendPath(buf[:0], 3, 1) }); n != 0 {
		t.Fatalf("%v allocations per path", n)
	}
}

// TestStartCopiesThePath checks that a transfer keeps its own path: the
// caller's slice, reused for another path after Start, changes nothing.
func TestStartCopiesThePath(t *testing.T) {
	n := New([]float64{50e9, 1e9})
	path := []int32{0}
	n.Start(0, path, 0, 5e6, 0)
	path[0] = 1 // the slow link: had the network kept the slice, the transfer would take 50 times longer
	if got := n.NextNs(); got != 100_000 {
		t.Fatalf("done at %d ns, want 100,000 (on link 0)", got)
	}
}
