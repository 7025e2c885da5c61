package parallel

import (
	"sync"

	"handoff/results"
	"handoff/sim"
)

// A split run (sim.Split): the fleet's shards run on goroutines of their
// own, one event loop each, and this goroutine merges what they write.
//
//	reader ──batches──▶ shard 0 … shard k−1 ──records──▶ merger (this goroutine)
//	   └──────────── which shard has each request ───────────▲
//
// The reader reads the workload in order, routes each request (Split.Add,
// Split.Next: in the order requests reach the router) and hands it to its
// shard, at most shardBatches batches ahead; it notes,
// for every request in ID order, the shard that has it. The merger takes
// the records in ID order, each from its shard, renumbers its ID and
// instances in the whole run's terms and hands it to the run's sink. Only
// the shards' inputs are bounded: a shard never waits on the merger, so a
// shard waiting for its next record cannot stall the reader, and memory
// stays that of the requests between the slowest shard and the reader.

// shardBatch is how many requests the reader hands a shard at once, and
// shardBatches how many batches it may be ahead of one.
const (
	shardBatch   = 256
	shardBatches = 8
)

// routed is a request with the shard's instance it was routed to.
type routed struct {
	req      sim.Request
	instance int32
}

// runSplit runs cfg as sp's shards, each on its own goroutine, and returns
// the whole run's result, the same as sim.Run(cfg) but for Events.
func runSplit(cfg *sim.Config, sp *sim.Split) (*sim.Result, error) {
	n := sp.Shards()
	feeds, spares := make([]chan []routed, n), make([]chan []routed, n)
	outs := make([]*recordQueue, n)
	for k := range n {
		feeds[k], spares[k], outs[k] = make(chan []routed, shardBatches), make(chan []routed, shardBatches), newRecordQueue()
	}
	owners := newQueue[uint16]()
	rd := &splitReader{src: cfg.Source, sp: sp, feeds: feeds, spares: spares, owners: owners, done: make(chan struct{})}
	go rd.run()
	parts, errs, panics := make([]*sim.Result, n), make([]error, n), make([]any, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer drainFeed(feeds[k]) // a shard that stops early must not stall the reader
			defer outs[k].close()
			panics[k] = catch(func() {
				parts[k], errs[k] = sim.Run(sp.Shard(k, &feedSource{feed: feeds[k], spare: spares[k]}, outs[k]))
			})
		}()
	}
	m := merger{cfg: cfg, sp: sp, outs: outs, owners: owners}
	if cfg.Records == nil {
		m.all = make([]results.Record, 0, cfg.ReservedRecords())
	}
	m.run()
	wg.Wait()
	<-rd.done
	if rd.panic != nil {
		panic(rd.panic)
	}
	if rd.err != nil {
		return nil, rd.err
	}
	for k := range n {
		if panics[k] != nil {
			panic(panics[k])
		}
		if errs[k] != nil {
			return nil, errs[k]
		}
	}
	res := sp.Merge(parts)
	res.Records, res.Sink = m.all, cfg.Records
	if cfg.Progress != nil {
		cfg.Progress(res.SimTimeNs, m.ended, cfg.ProgressTotal())
	}
	return res, nil
}

// drainFeed receives from feed until it is closed.
func drainFeed(feed chan []routed) {
	for range feed {
	}
}

// splitReader reads the workload, routes it and feeds the shards.
type splitReader struct {
	src    sim.Source
	sp     *sim.Split
	feeds  []chan []routed
	spares []chan []routed
	owners *queue[uint16]
	done   chan struct{}
	err    error
	panic  any
}

// run reads the workload to its end or its first error, then closes every
// feed and the owners' queue.
func (rd *splitReader) run() {
	defer close(rd.done)
	batches := make([][]routed, len(rd.feeds))
	for k := range batches {
		batches[k] = make([]routed, 0, shardBatch)
	}
	hand := func() { // hand out every request whose shard is known, in arrival order
		for {
			r, k, local, ok := rd.sp.Next()
			if !ok {
				return
			}
			rd.owners.push(uint16(k))
			if batches[k] = append(batches[k], routed{req: r, instance: local}); len(batches[k]) == shardBatch {
				rd.feeds[k] <- batches[k]
				batches[k] = reuse(rd.spares[k], shardBatch)
			}
		}
	}
	rd.panic = catch(func() {
		var r sim.Request
		for {
			ok, err := rd.src.Next(&r)
			if err != nil || !ok {
				rd.err = err
				break
			}
			if rd.err = rd.sp.Add(&r); rd.err != nil {
				return
			}
			hand()
		}
		rd.sp.End()
		hand()
	})
	for k, b := range batches {
		if len(b) > 0 {
			rd.feeds[k] <- b
		}
		close(rd.feeds[k])
	}
	rd.owners.close()
}

// feedSource is a shard's workload, its batches from the reader.
type feedSource struct {
	feed  chan []routed
	spare chan []routed // batches read, for the reader to fill again
	batch []routed
	pos   int
}

// Next implements sim.RoutedSource.
func (s *feedSource) Next(r *sim.Request) (int32, bool, error) {
	if s.pos == len(s.batch) {
		if s.batch != nil {
			giveBack(s.spare, s.batch)
		}
		b, ok := <-s.feed
		if !ok {
			return 0, false, nil
		}
		s.batch, s.pos = b, 0
	}
	x := &s.batch[s.pos]
	s.pos++
	*r = x.req
	return x.instance, true, nil
}

// merger hands the shards' records to the run's sink in ID order.
type merger struct {
	cfg    *sim.Config
	sp     *sim.Split
	outs   []*recordQueue
	owners *queue[uint16]
	all    []results.Record // the run keeps its records: every one, by ID
	ended  int64
	lastNs int64
}

// run merges until the last request's record, or until a shard stops
// short of one (its error ends the run).
func (m *merger) run() {
	tot := m.cfg.ProgressTotal()
	for id := int64(0); ; id++ {
		k, ok := m.owners.pop()
		if !ok {
			return
		}
		rec, ok := m.outs[k].pop()
		if !ok {
			return
		}
		rec.ID = id
		if rec.PrefillInstance >= 0 {
			rec.PrefillInstance = m.sp.Instance(int(k), rec.PrefillInstance)
		}
		if rec.DecodeInstance >= 0 {
			rec.DecodeInstance = m.sp.Instance(int(k), rec.DecodeInstance)
		}
		if m.cfg.Records != nil {
			m.cfg.Records.Record(&rec)
		} else {
			m.all = append(m.all, rec)
		}
		m.ended++
		m.lastNs = max(m.lastNs, rec.FinishNs)
		if m.ended&(sim.ProgressEvents-1) == 0 && m.cfg.Progress != nil {
			m.cfg.Progress(m.lastNs, m.ended, tot)
		}
	}
}

// recordQueue is a shard's records on their way to the merger: the shard
// adds them in batches, without ever waiting.
type recordQueue struct {
	q     *queue[[]results.Record]
	buf   []results.Record
	batch []results.Record // the merger's current batch
	pos   int
	spare chan []results.Record // batches the merger is done with, for the shard to fill again
}

// recordBatchSplit is how many records a shard hands the merger at once.
const recordBatchSplit = 256

func newRecordQueue() *recordQueue {
	return &recordQueue{q: newQueue[[]results.Record](), buf: make([]results.Record, 0, recordBatchSplit),
		spare: make(chan []results.Record, shardBatches)}
}

// Record implements sim.RecordSink, on the shard's goroutine.
func (rq *recordQueue) Record(r *results.Record) {
	rq.buf = append(rq.buf, *r)
	if len(rq.buf) == recordBatchSplit {
		rq.q.push(rq.buf)
		rq.buf = reuse(rq.spare, recordBatchSplit)
	}
}

// close hands over the shard's last records, on its goroutine.
func (rq *recordQueue) close() {
	if len(rq.buf) > 0 {
		rq.q.push(rq.buf)
	}
	rq.q.close()
}

// pop returns the shard's next record, waiting for it; false once the
// shard has ended without one.
func (rq *recordQueue) pop() (results.Record, bool) {
	if rq.pos == len(rq.batch) {
		if rq.batch != nil {
			giveBack(rq.spare, rq.batch)
		}
		b, ok := rq.q.pop()
		if !ok {
			return results.Record{}, false
		}
		rq.batch, rq.pos = b, 0
	}
	rq.pos++
	return rq.batch[rq.pos-1], true
}

// queue is an unbounded first-in first-out queue between goroutines:
// push never waits, pop waits for an item or the queue's close.
type queue[T any] struct {
	mu     sync.Mutex
	ready  *sync.Cond
	items  []T
	head   int
	closed bool
}

func newQueue[T any]() *queue[T] {
	q := &queue[T]{}
	q.ready = sync.NewCond(&q.mu)
	return q
}

func (q *queue[T]) push(x T) {
	q.mu.Lock()
	if q.head >= 64 && 2*q.head >= len(q.items) { // half taken: move the rest to the front
		q.items, q.head = q.items[:copy(q.items, q.items[q.head:])], 0
	}
	q.items = append(q.items, x)
	q.mu.Unlock()
	q.ready.Signal()
}

func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.ready.Broadcast()
}

func (q *queue[T]) pop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.closed {
		q.ready.Wait()
	}
	var x T
	if q.head == len(q.items) {
		return x, false
	}
	x, q.items[q.head] = q.items[q.head], x
	q.head++
	return x, true
}

// reuse returns a spare batch, emptied, or a new one of capacity n: it
// never waits.
func reuse[T any](spare chan []T, n int) []T {
	select {
	case b := <-spare:
		return b[:0]
	default:
		return make([]T, 0, n)
	}
}

// giveBack offers a batch done with for reuse, unless enough are spare:
// it never waits.
func giveBack[T any](spare chan []T, b []T) {
	select {
	case spare <- b:
	default:
	}
}
