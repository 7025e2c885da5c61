package router

import "testing"

func views(outstanding ...int) []View {
	vs := make([]View, len(outstanding))
	for i, o := range outstanding {
		vs[i] = View{Index: 10 + i, Outstanding: o}
	}
	return vs
}

func TestRoundRobinCyclesEachLegIndependently(t *testing.T) {
	c := &Cluster{Prefill: views(0, 0), Decode: views(0, 0, 0)}
	var rr RoundRobin
	want := []Decision{{Prefill: 10, Decode: 10}, {Prefill: 11, Decode: 11}, {Prefill: 10, Decode: 12}, {Prefill: 11, Decode: 10}}
	for i, w := range want {
		if got := rr.Route(&Request{}, c); got != w {
			t.Fatalf("route %d = %+v, want %+v", i, got, w)
		}
	}
}

func TestRoundRobinColocatedHasNoDecodeLeg(t *testing.T) {
	var rr RoundRobin
	if got := rr.Route(&Request{}, &Cluster{Prefill: views(0)}); got.Decode != -1 {
		t.Fatalf("decode = %d, want -1", got.Decode)
	}
}

func TestLeastLoadedPicksFewestOutstandingLowestIndexOnTie(t *testing.T) {
	c := &Cluster{Prefill: views(3, 1, 1), Decode: views(2, 0)}
	got := (&LeastLoaded{}).Route(&Request{}, c)
	if want := (Decision{Prefill: 11, Decode: 11}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
