package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEventQueuePopsInTimeClassSequenceOrder(t *testing.T) {
	var q eventQueue
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		q.push(rng.Int64N(100), uint8(rng.IntN(3)), int32(i))
	}
	prev := q.pop()
	for q.len() > 0 {
		e := q.pop()
		if e.before(&prev) {
			t.Fatalf("popped %+v after %+v", e, prev)
		}
		prev = e
	}
}

func TestSameTimeEventsOrderedByClassThenInsertion(t *testing.T) {
	var q eventQueue
	q.push(5, classArrival, 1)
	q.push(5, classStep, 2)
	q.push(5, classNetwork, 3)
	q.push(5, classStep, 4)
	var got []int32
	for q.len() > 0 {
		got = append(got, q.pop().arg)
	}
	want := []int32{3, 2, 4, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// Same-instant steps, and same-instant kicks, pop in instance order
// whenever they were pushed (steprun.go relies on it).
func TestInstanceEventsOrderedByIndex(t *testing.T) {
	var q eventQueue
	q.pushInstance(5, classKick, 1, 0)
	q.pushInstance(5, classStep, 9, 3)
	q.push(5, classArrival, 7)
	q.pushInstance(5, classStep, 2, 8)
	q.pushInstance(5, classKick, 0, 0)
	var got []int32
	for q.len() > 0 {
		got = append(got, q.pop().arg)
	}
	if want := []int32{2, 9, 7, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestStreamsAreReproducibleAndIndependent(t *testing.T) {
	a, b := NewStreams(7).Stream("router"), NewStreams(7).Stream("router")
	c := NewStreams(7).Stream("workload")
	if a.Uint64() != b.Uint64() {
		t.Fatal("same seed and name gave different streams")
	}
	if a.Uint64() == c.Uint64() {
		t.Fatal("different names gave the same stream")
	}
}

func BenchmarkEventQueue(b *testing.B) {
	var q eventQueue
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1024 {
		q.push(rng.Int64N(1e9), classStep, 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		e := q.pop()
		q.push(e.at+rng.Int64N(1e6), classStep, 0)
	}
}
