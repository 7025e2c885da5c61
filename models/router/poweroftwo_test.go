package router

import (
	"math/rand/v2"
	"testing"
)

// TestPowerOfTwoTakesTheShorterOfTwoDraws: each choice draws two distinct
// candidates and takes the one with fewer outstanding requests, the first
// drawn on a tie; a single candidate is taken as it is; a disaggregated
// request's decoder is chosen after its prefill.
func TestPowerOfTwoTakesTheShorterOfTwoDraws(t *testing.T) {
	vs := views(0, 9, 9, 9) // instance 10 idle, 11–13 busy
	draws := rand.New(rand.NewPCG(7, 7))
	p := NewPowerOfTwo(rand.New(rand.NewPCG(7, 7)))
	idle := 0
	const n = 20000
	for range n {
		i := draws.IntN(4)
		j := draws.IntN(3)
		if j >= i {
			j++
		}
		want := vs[i].Index
		if vs[j].Outstanding < vs[i].Outstanding {
			want = vs[j].Index
		}
		got := p.choose(vs)
		if got != want {
			t.Fatalf("chose %d, want %d (candidates %d and %d)", got, want, vs[i].Index, vs[j].Index)
		}
		if got == 10 {
			idle++
		}
	}
	// The idle instance is one of two distinct draws of four half the time.
	if share := float64(idle) / n; share < 0.48 || share > 0.52 {
		t.Errorf("idle instance chosen %.3f of the time, want 1/2", share)
	}
	if got := p.choose(views(5)); got != 10 {
		t.Errorf("single candidate: chose %d, want 10", got)
	}
	d := p.Route(&Request{}, &Cluster{Prefill: views(2, 0), Decode: views(2, 0)})
	if d.Decode != DecodeLater {
		t.Errorf("decoder %d at arrival, want DecodeLater (chosen after the prefill)", d.Decode)
	}
	if got := p.RouteDecode(&Request{}, &Cluster{Decode: views(3)}); got != 10 {
		t.Errorf("decoder %d, want 10", got)
	}
}
