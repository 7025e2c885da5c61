package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestClassSummaryByHand: each class is judged against its own SLO, its
// goodput is over the whole run's span, and the streamed summary's
// classes are Summarize's.
func TestClassSummaryByHand(t *testing.T) {
	rec := func(class uint8, ttftMs, e2eMs int64, out int32) Record {
		return Record{ArrivalNs: 0, FirstTokenNs: ttftMs * 1e6, FinishNs: e2eMs * 1e6, OutputTokens: out, Class: class,
			PrefillInstance: -1, DecodeInstance: -1}
	}
	recs := []Record{
		rec(0, 100, 1000, 10),  // interactive, TPOT 100 ms: misses its 50 ms
		rec(0, 100, 500, 9),    // interactive, TPOT 50 ms: good
		rec(1, 3000, 4000, 11), // batch, TTFT 3 s, TPOT 100 ms: good
		rec(1, 6000, 10000, 2), // batch, TTFT 6 s: misses its 5 s; the run spans 10 s
	}
	info := RunInfo{SLO: SLO{TTFTNs: 10e9, TPOTNs: 1e9, Attainment: 0.9}, GPUs: 2, Classes: []Class{
		{Name: "interactive", SLO: SLO{TTFTNs: 200e6, TPOTNs: 50e6, Attainment: 0.5}},
		{Name: "batch", SLO: SLO{TTFTNs: 5e9, TPOTNs: 200e6, Attainment: 0.9}}}}
	s := Summarize(recs, nil, info)
	if len(s.Classes) != 2 {
		t.Fatalf("%d classes, want 2", len(s.Classes))
	}
	for i, want := range []struct {
		good     int64
		att      float64
		met      bool
		goodput  float64
		ttftP99S float64
	}{{1, 0.5, true, 0.1, 0.1}, {1, 0.5, false, 0.1, 5.97}} {
		c := s.Classes[i].SLO
		if c.Good != want.good || c.Attainment != want.att || c.Met != want.met || c.RequestGoodputRPS != want.goodput ||
			c.RequestGoodputRPSPerGPU != want.goodput/2 || s.Classes[i].TTFT.P99 != want.ttftP99S {
			t.Errorf("class %d: %+v, TTFT %+v; want %+v", i, c, s.Classes[i].TTFT, want)
		}
	}
	if s.AllClassesMet() {
		t.Error("every class met its target, but batch did not")
	}
	z := NewSummarizer(info.SLO)
	z.SetClasses(info.Classes)
	for i := range recs {
		z.Add(&recs[i])
	}
	if got := z.Summary(nil, info); len(got.Classes) != 2 || got.Classes[0] != s.Classes[0] || got.Classes[1] != s.Classes[1] {
		t.Errorf("streamed classes %+v, want %+v", got.Classes, s.Classes)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "class       batch: 2 requests (2 completed), TTFT p99 5970.0 ms") {
		t.Errorf("the table lacks the batch class's line:\n%s", b.String())
	}
}
