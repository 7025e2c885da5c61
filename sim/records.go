package sim

import (
	"fmt"

	"handoff/results"
)

// RecordSink takes a run's records as they become final (Config.Records).
// Record is called once per request, in ID order, as soon as the request
// and every request before it have ended; r is the simulator's and is
// reused once Record returns, so the sink must copy what it keeps and not
// keep r. It must not touch the run.
type RecordSink interface {
	Record(r *results.Record)
}

// recordWindow holds a run's records. With no sink it keeps every record,
// indexed by ID (Result.Records). With a sink it holds only those from the
// lowest request ID not yet ended up to the newest, in chunks: a record
// never moves while its request is in flight (it stays at the same
// address however many arrive), and a chunk whose requests have all been
// handed over is reused. Memory is then O(requests from the oldest in
// flight to the newest), not O(requests in the run).
type recordWindow struct {
	sink RecordSink
	all  []results.Record // no sink: every record, by ID

	chunks []*recordChunk // chunks[k] holds IDs (first+k)·chunkSize …
	spare  []*recordChunk // chunks handed over, for reuse
	first  int64          // chunk number of chunks[0]
	base   int64          // lowest ID not yet handed over
	next   int64          // the ID the next request gets
	ready  bool           // request base has ended: flush has work
}

// recordChunk is chunkSize consecutive records and whether each ended.
type recordChunk struct {
	recs  [chunkSize]results.Record
	ended [chunkSize]bool
}

// chunkSize records per chunk (≈ 120 KiB): a power of two.
const (
	chunkBits = 9
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// init sets the window up for sink (nil: keep every record), reserving
// room for reserve records when every one is kept.
func (w *recordWindow) init(sink RecordSink, reserve int) {
	w.sink = sink
	if sink == nil && reserve > 0 {
		w.all = make([]results.Record, 0, reserve)
	}
}

// add appends the record of a new request, whose ID must be w.next, and
// returns it.
func (w *recordWindow) add(r results.Record) *results.Record {
	if r.ID != w.next {
		panic(fmt.Sprintf("sim: record %d added as request %d (simulator bug)", r.ID, w.next))
	}
	w.next++
	if w.sink == nil {
		w.all = append(w.all, r)
		return &w.all[len(w.all)-1]
	}
	if r.ID&chunkMask == 0 {
		var ch *recordChunk
		if n := len(w.spare); n > 0 {
			ch, w.spare = w.spare[n-1], w.spare[:n-1]
		} else {
			ch = new(recordChunk)
		}
		w.chunks = append(w.chunks, ch)
	}
	rec := w.at(r.ID)
	*rec = r
	return rec
}

// at is request id's record, which must not have been handed over.
func (w *recordWindow) at(id int64) *results.Record {
	if w.sink == nil {
		return &w.all[id]
	}
	return w.inWindow(id)
}

// inWindow is at with a sink.
func (w *recordWindow) inWindow(id int64) *results.Record {
	if id < w.base {
		panic(fmt.Sprintf("sim: record %d read after it was handed over (simulator bug)", id))
	}
	return &w.chunks[id>>chunkBits-w.first].recs[id&chunkMask]
}

// end notes that request id has ended: its record is final once the
// event that ended it is handled (flush).
func (w *recordWindow) end(id int64) {
	if w.sink == nil {
		return
	}
	w.chunks[id>>chunkBits-w.first].ended[id&chunkMask] = true
	if id == w.base {
		w.ready = true
	}
}

// flush hands the records of the ended requests below the oldest one in
// flight to the sink, in ID order, and frees the chunks they leave. It
// runs between events, when no record is being written.
func (w *recordWindow) flush() {
	if w.ready {
		w.handOver()
	}
}

// handOver is flush's work once the oldest request has ended.
func (w *recordWindow) handOver() {
	w.ready = false
	for w.base < w.next {
		ch, j := w.chunks[0], w.base&chunkMask
		if !ch.ended[j] {
			return
		}
		ch.ended[j] = false
		w.sink.Record(&ch.recs[j])
		if w.base++; w.base&chunkMask == 0 {
			w.chunks[0] = nil
			w.chunks = w.chunks[1:]
			w.spare = append(w.spare, ch)
			w.first++
		}
	}
}

// record is request id's record, while the request is in flight (and,
// within the event that ends it, just after).
func (c *cluster) record(id int64) *results.Record { return c.recs.at(id) }
