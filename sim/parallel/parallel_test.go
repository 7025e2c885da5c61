package parallel

import (
	"errors"
	"slices"
	"testing"

	"handoff/results"
	"handoff/sim"
)

// listSource yields n requests, then ends with err (nil: exhausted), or
// panics in place of request panicAt (< 0: never).
type listSource struct {
	n, at, panicAt int
	err            error
	afterEnd       int // calls after the end
}

func (s *listSource) Next(r *sim.Request) (bool, error) {
	if s.at == s.panicAt {
		panic("listSource: broken")
	}
	if s.at == s.n {
		s.afterEnd++
		return false, s.err
	}
	*r = sim.Request{ID: int64(s.at), ArrivalNs: int64(3 * s.at), PromptTokens: s.at%7 + 1, OutputTokens: 1}
	s.at++
	return true, nil
}

type countedSource struct{ listSource }

func (c *countedSource) MaxRequests() int { return c.n }

// drain reads src to its end and returns what it yielded and its error.
func drain(src sim.Source) ([]sim.Request, error) {
	var out []sim.Request
	var r sim.Request
	for {
		ok, err := src.Next(&r)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, r)
	}
}

// TestPrefetchYieldsTheSourcesSequence: read ahead, a source yields the
// same requests, end and error as read in step, on either side of a batch's
// edge, and its end again when asked again.
func TestPrefetchYieldsTheSourcesSequence(t *testing.T) {
	boom := errors.New("trace.csv:9: bad")
	for _, n := range []int{0, 1, batchRequests - 1, batchRequests, batchRequests + 1, 5*batchRequests + 3} {
		for _, err := range []error{nil, boom} {
			want, wantErr := drain(&listSource{n: n, panicAt: -1, err: err})
			src, p := newPrefetch(&listSource{n: n, panicAt: -1, err: err})
			got, gotErr := drain(src)
			if !slices.EqualFunc(got, want, sameRequest) || gotErr != wantErr {
				t.Errorf("n=%d err=%v: %d requests and %v, want %d and %v", n, err, len(got), gotErr, len(want), wantErr)
			}
			if ok, again := src.Next(&sim.Request{}); ok || again != wantErr {
				t.Errorf("n=%d: after the end, Next gave %v, %v", n, ok, again)
			}
			p.close()
		}
	}
}

// TestPrefetchKeepsTheCount: a Counted source stays Counted, with its count;
// another does not become one.
func TestPrefetchKeepsTheCount(t *testing.T) {
	src, p := newPrefetch(&countedSource{listSource{n: 7, panicAt: -1}})
	defer p.close()
	if c, ok := src.(sim.Counted); !ok || c.MaxRequests() != 7 {
		t.Errorf("counted source read ahead: %T", src)
	}
	plain, q := newPrefetch(&listSource{n: 7, panicAt: -1})
	defer q.close()
	if _, ok := plain.(sim.Counted); ok {
		t.Error("an uncounted source became Counted")
	}
}

// TestPrefetchRaisesTheSourcesPanic: a source's panic comes out of Next,
// after the requests before it, on the caller's goroutine.
func TestPrefetchRaisesTheSourcesPanic(t *testing.T) {
	src, p := newPrefetch(&listSource{n: 2000, panicAt: 700})
	defer p.close()
	var r sim.Request
	for k := range 700 {
		if ok, err := src.Next(&r); !ok || err != nil || r.ID != int64(k) {
			t.Fatalf("request %d: %v %v, ID %d", k, ok, err, r.ID)
		}
	}
	defer func() {
		if v := recover(); v != "listSource: broken" {
			t.Errorf("recovered %v", v)
		}
	}()
	src.Next(&r)
	t.Error("no panic")
}

// TestPrefetchStopsEarly: closing before the source's end stops its reader
// (a run that failed leaves it behind).
func TestPrefetchStopsEarly(t *testing.T) {
	src, p := newPrefetch(&listSource{n: 1 << 30, panicAt: -1})
	var r sim.Request
	src.Next(&r)
	p.close()
}

// recordList keeps the IDs of the records it is handed and, when set,
// panics at one.
type recordList struct {
	ids     []int64
	panicAt int64
}

func (l *recordList) Record(r *results.Record) {
	if r.ID == l.panicAt {
		panic("recordList: broken")
	}
	l.ids = append(l.ids, r.ID)
}

// TestAsyncSinkKeepsOrder: every record reaches the consumer, in order,
// and after close, even though the loop's record is reused at once.
func TestAsyncSinkKeepsOrder(t *testing.T) {
	for _, n := range []int{0, 1, recordBatch, recordBatch + 1, 7*recordBatch + 5} {
		l := &recordList{panicAt: -1}
		s := newAsyncSink(l)
		var r results.Record
		for k := range n {
			r.ID = int64(k)
			s.Record(&r)
		}
		s.close()
		if len(l.ids) != n {
			t.Fatalf("n=%d: %d records reached the consumer", n, len(l.ids))
		}
		for k, id := range l.ids {
			if id != int64(k) {
				t.Fatalf("n=%d: record %d is %d", n, k, id)
			}
		}
	}
}

// TestAsyncSinkRaisesItsPanic: a consumer's panic comes out of close, and
// the loop is never left waiting on the broken consumer.
func TestAsyncSinkRaisesItsPanic(t *testing.T) {
	s := newAsyncSink(&recordList{panicAt: 10})
	var r results.Record
	for k := range 20 * recordBatch {
		r.ID = int64(k)
		s.Record(&r)
	}
	defer func() {
		if v := recover(); v != "recordList: broken" {
			t.Errorf("recovered %v", v)
		}
	}()
	s.close()
	t.Error("no panic")
}

// TestAttachRestores: Close gives the configuration its source and sink
// back; a closed loop or sessions keep their source in step; the note says
// what runs where.
func TestAttachRestores(t *testing.T) {
	src, sink := &listSource{n: 3, panicAt: -1}, &recordList{panicAt: -1}
	cfg := &sim.Config{Source: src, Records: sink}
	p := Attach(cfg, 2)
	const both = "2 cores: the event loop runs on one, and beside it the workload is read ahead and the records are consumed"
	if cfg.Source == sim.Source(src) || cfg.Records == sim.RecordSink(sink) || p.Note != both {
		t.Errorf("on 2 cores: source %T, sink %T, note %q", cfg.Source, cfg.Records, p.Note)
	}
	p.Close()
	p.Close()
	if cfg.Source != sim.Source(src) || cfg.Records != sim.RecordSink(sink) {
		t.Error("Close did not restore the source and sink")
	}
	cfg.Client.Concurrency, cfg.Records = 4, nil
	p = Attach(cfg, 3)
	const none = "3 cores: the event loop runs on one, and the run keeps its records, so nothing runs beside it; " +
		"a closed loop's users send as their requests end, so the workload is read in step with the run"
	if cfg.Source != sim.Source(src) || p.Note != none {
		t.Errorf("a closed loop keeping its records: source %T, note %q", cfg.Source, p.Note)
	}
	p.Close()
	if one := Attach(cfg, 1); cfg.Source != sim.Source(src) || cfg.Records != nil || one.Note != "" {
		t.Error("one core changed the configuration")
	}
}

// sameRequest compares the fields listSource sets.
func sameRequest(a, b sim.Request) bool {
	return a.ID == b.ID && a.ArrivalNs == b.ArrivalNs && a.PromptTokens == b.PromptTokens && a.OutputTokens == b.OutputTokens
}

// TestShards: one shard per core at least, about 64 instances a shard for
// a large fleet, at most 64; one core runs whole.
func TestShards(t *testing.T) {
	for _, c := range []struct{ cores, n, want int }{
		{1, 1024, 1}, {2, 3, 2}, {2, 64, 2}, {2, 256, 4}, {2, 1024, 16}, {2, 16384, 64},
		{16, 64, 16}, {16, 2048, 32}, {128, 16384, 128},
	} {
		if got := shards(c.cores, c.n); got != c.want {
			t.Errorf("shards(%d cores, %d instances) = %d, want %d", c.cores, c.n, got, c.want)
		}
	}
}
