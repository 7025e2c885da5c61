package sim

import (
	"fmt"
	"testing"

	"handoff/results"
)

// collect is a RecordSink that copies every record it is handed.
type collect struct{ recs []results.Record }

func (s *collect) Record(r *results.Record) { s.recs = append(s.recs, *r) }

// TestRecordSinkMatchesKept: over swarm cases (P/D and colocated, faults,
// failovers, timeouts, sessions, closed loops), a run with a sink hands
// it every record once, in ID order, equal to the records a run without
// one keeps, and returns none itself.
func TestRecordSinkMatchesKept(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := swarmCase(t, seed)
			cfg.Records = nil // the swarm may draw a sink
			kept := mustRun(t, cfg)
			cfg = swarmCase(t, seed)
			sink := &collect{}
			cfg.Records = sink
			streamed := mustRun(t, cfg)
			if streamed.Records != nil || streamed.Sink != sink {
				t.Fatalf("with a sink: %d records kept, sink %v", len(streamed.Records), streamed.Sink)
			}
			if kept.Requests != int64(len(kept.Records)) || streamed.Requests != kept.Requests {
				t.Fatalf("requests: kept %d (%d records), streamed %d", kept.Requests, len(kept.Records), streamed.Requests)
			}
			streamed.Records, streamed.Sink = sink.recs, nil
			if d := sameResult(kept, streamed); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestRecordWindowBounded: requests that end out of order, at most 100
// in flight, are handed over in ID order as soon as every earlier one has
// ended, and the window holds only the chunks that span the ones in
// flight, reused as it moves.
func TestRecordWindowBounded(t *testing.T) {
	sink := &collect{}
	var w recordWindow
	w.init(sink, 0)
	const n, inFlight = 100_000, 100
	for id := range int64(n) {
		w.add(results.Record{ID: id, ArrivalNs: id})
		if id >= inFlight-1 { // end, out of order, one of the last 100
			end := id - inFlight + 1
			if end%2 == 0 && end+1 <= id {
				w.end(end + 1)
				w.end(end)
			} else if end%2 == 0 {
				w.end(end)
			}
			w.flush()
		}
		if held := len(w.chunks) + len(w.spare); held > 3 {
			t.Fatalf("at request %d the window holds %d chunks", id, held)
		}
	}
	for id := int64(n - inFlight + 1); id < n; id++ {
		if !w.chunks[id>>chunkBits-w.first].ended[id&chunkMask] {
			w.end(id)
		}
	}
	w.flush()
	if len(sink.recs) != n {
		t.Fatalf("%d records handed over, want %d", len(sink.recs), n)
	}
	for i, r := range sink.recs {
		if r.ID != int64(i) || r.ArrivalNs != int64(i) {
			t.Fatalf("record %d handed over as %+v", i, r)
		}
	}
}

// TestRecordReadAfterHandover: reading a record already handed over is a
// simulator bug, caught rather than answered from a reused slot.
func TestRecordReadAfterHandover(t *testing.T) {
	var w recordWindow
	w.init(&collect{}, 0)
	w.add(results.Record{ID: 0})
	w.end(0)
	w.flush()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic reading a handed-over record")
		}
	}()
	w.at(0)
}
