package parallel

import (
	"handoff/results"
	"handoff/sim"
)

// recordBatch is how many records the loop hands the consumers at once.
const recordBatch = 1024

// asyncSink is a RecordSink that hands each record, copied, to next on
// its own goroutine, in the order Record was called. A panic in next is
// raised again by close, on the loop's goroutine.
type asyncSink struct {
	next  sim.RecordSink
	buf   []results.Record
	full  chan []results.Record
	free  chan []results.Record
	done  chan struct{}
	panic any
}

// newAsyncSink starts next's goroutine.
func newAsyncSink(next sim.RecordSink) *asyncSink {
	s := &asyncSink{next: next, full: make(chan []results.Record, batchesAhead),
		free: make(chan []results.Record, batchesAhead+1), done: make(chan struct{})}
	for range batchesAhead {
		s.free <- make([]results.Record, 0, recordBatch)
	}
	s.buf = make([]results.Record, 0, recordBatch)
	go s.consume()
	return s
}

// Record copies r for the consumers.
func (s *asyncSink) Record(r *results.Record) {
	s.buf = append(s.buf, *r)
	if len(s.buf) == recordBatch {
		s.full <- s.buf
		s.buf = <-s.free
	}
}

// consume hands every batch's records to next, in order. After a panic
// it keeps taking batches, so that the loop never waits on it.
func (s *asyncSink) consume() {
	defer close(s.done)
	for b := range s.full {
		if s.panic == nil {
			s.panic = catch(func() {
				for i := range b {
					s.next.Record(&b[i])
				}
			})
		}
		s.free <- b[:0]
	}
}

// close hands over the last records and waits until next has them all.
func (s *asyncSink) close() {
	if len(s.buf) > 0 {
		s.full <- s.buf
	}
	close(s.full)
	<-s.done
	if s.panic != nil {
		panic(s.panic)
	}
}
