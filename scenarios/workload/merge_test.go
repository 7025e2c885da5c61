package workload

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"handoff/models/kv"
	"handoff/sim"
)

// serveGenClients opens the first n shipped ServeGen R1 clients, a whole
// day each, client c drawing from seed+c.
func serveGenClients(t *testing.T, n int, seed uint64) []sim.Source {
	t.Helper()
	var srcs []sim.Source
	for c := range n {
		name := fmt.Sprintf("../traces/servegen-r1/chunk-%d-trace.csv", c)
		src, err := NewServeGen(openFile(t, name), openFile(t, strings.TrimSuffix(name, "trace.csv")+"dataset.json"),
			name, newRNG(seed+uint64(c)))
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	return srcs
}

// The eight clients of a day merged: arrivals never decrease, IDs are
// dense, the count is the sum of the parts and every part's requests are
// there, and the same seeds give the same sequence.
func TestMergeServeGenDay(t *testing.T) {
	merged, err := drain(Merge(serveGenClients(t, 8, 1)...), 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, merged)
	type key struct {
		at       int64
		in, outT int
	}
	var want []key
	for _, src := range serveGenClients(t, 8, 1) {
		part, err := drain(src, 1<<22)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			want = append(want, key{r.ArrivalNs, r.PromptTokens, r.OutputTokens})
		}
	}
	if len(merged) != len(want) {
		t.Fatalf("merged %d requests, the parts hold %d", len(merged), len(want))
	}
	got := make([]key, len(merged))
	for i, r := range merged {
		got[i] = key{r.ArrivalNs, r.PromptTokens, r.OutputTokens}
	}
	cmp := func(a, b key) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.in != b.in {
			return a.in - b.in
		}
		return a.outT - b.outT
	}
	slices.SortFunc(got, cmp)
	slices.SortFunc(want, cmp)
	if !slices.Equal(got, want) {
		t.Fatal("the merged requests are not the parts' requests")
	}
	if last := merged[len(merged)-1].ArrivalNs; last < 143*600e9 || last >= 144*600e9 {
		t.Errorf("last arrival at %.0f s, want within the day's last window", float64(last)/1e9)
	}
	again, err := drain(Merge(serveGenClients(t, 8, 1)...), 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(merged, again, func(a, b sim.Request) bool {
		return a.ID == b.ID && a.ArrivalNs == b.ArrivalNs &&
			a.PromptTokens == b.PromptTokens && a.OutputTokens == b.OutputTokens
	}) {
		t.Fatal("same seeds, different sequences")
	}
}

// reusing is a source that, like a trace reader, rebuilds each request's
// Prefix in the buffer its caller passed: request i arrives at times[i]
// with one segment of hash i.
type reusing struct {
	times []int64
	i     int
	base  uint64
}

func (s *reusing) Next(r *sim.Request) (bool, error) {
	if s.i == len(s.times) {
		return false, nil
	}
	*r = sim.Request{ArrivalNs: s.times[s.i], PromptTokens: 16, OutputTokens: 1,
		Prefix: append(r.Prefix[:0], kv.Segment{ID: s.base + uint64(s.i), Tokens: 16})}
	s.i++
	return true, nil
}

// Ties go to the source listed first, and a source that reuses its buffer
// never overwrites a request already handed out.
func TestMergeTiesAndBuffers(t *testing.T) {
	a := &reusing{times: []int64{0, 5, 5, 9}, base: 100}
	b := &reusing{times: []int64{5, 7}, base: 200}
	var got []string
	m := Merge(a, b)
	var held []sim.Request
	for {
		var r sim.Request
		ok, err := m.Next(&r)
		if err != nil || !ok {
			break
		}
		held = append(held, r)
	}
	for _, r := range held {
		got = append(got, fmt.Sprintf("%d@%d", r.Prefix[0].ID, r.ArrivalNs))
	}
	want := "100@0 101@5 102@5 200@5 201@7 103@9"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("got %s, want %s", s, want)
	}
	checkInvariants(t, held)
}
