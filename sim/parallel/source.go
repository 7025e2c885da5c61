package parallel

import "handoff/sim"

// sourceBatch is requests the reader read ahead, and what followed them:
// the source's end, its error, or a panic inside it.
type sourceBatch struct {
	reqs  []sim.Request
	end   bool // the source was exhausted after reqs
	err   error
	panic any // recovered from the source; raised again on the loop's goroutine
}

// batchRequests is how many requests a batch holds: enough that handing
// one over costs little per request, few enough to keep memory flat.
const batchRequests = 512

// batchesAhead bounds the batches read ahead of the loop.
const batchesAhead = 4

// prefetch is a Source that reads its source ahead of the run on its own
// goroutine. Its Next yields what the source's would, in the same order,
// with the same end and error; a panic in the source is raised again
// from Next.
type prefetch struct {
	full chan *sourceBatch // read ahead, in order
	free chan *sourceBatch // handed back for reuse
	stop chan struct{}     // closed by close: the reader stops
	done chan struct{}     // closed when the reader returns
	cur  *sourceBatch
	at   int
}

// countedPrefetch is a prefetch of a sim.Counted source: the run reserves
// records and reports progress from its count, as without the prefetch.
type countedPrefetch struct {
	*prefetch
	n int
}

// MaxRequests is the source's count.
func (c countedPrefetch) MaxRequests() int { return c.n }

// newPrefetch starts reading src ahead and returns the Source the run
// reads instead, and the prefetch to close once the run is over.
func newPrefetch(src sim.Source) (sim.Source, *prefetch) {
	p := &prefetch{full: make(chan *sourceBatch, batchesAhead), free: make(chan *sourceBatch, batchesAhead+1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.read(src)
	if c, ok := src.(sim.Counted); ok {
		return countedPrefetch{p, c.MaxRequests()}, p
	}
	return p, p
}

// read fills batches from src until it ends, fails or panics, or the run
// is over. One Request is passed to src throughout, as the run passes its
// own.
func (p *prefetch) read(src sim.Source) {
	defer close(p.done)
	var r sim.Request
	for {
		b := p.batch()
		b.panic = catch(func() {
			for len(b.reqs) < batchRequests {
				ok, err := src.Next(&r)
				if b.err, b.end = err, !ok; err != nil || !ok {
					return
				}
				b.reqs = append(b.reqs, r)
			}
		})
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.end || b.err != nil || b.panic != nil {
			return
		}
	}
}

// batch returns an empty batch: one handed back, or a new one.
func (p *prefetch) batch() *sourceBatch {
	select {
	case b := <-p.free:
		*b = sourceBatch{reqs: b.reqs[:0]}
		return b
	default:
		return &sourceBatch{reqs: make([]sim.Request, 0, batchRequests)}
	}
}

// Next fills r with the source's next request.
func (p *prefetch) Next(r *sim.Request) (bool, error) {
	for p.cur == nil || p.at == len(p.cur.reqs) {
		if b := p.cur; b != nil {
			switch {
			case b.panic != nil:
				panic(b.panic)
			case b.end || b.err != nil:
				return false, b.err // and again on every later call, as the source would
			}
			p.free <- b
		}
		p.cur, p.at = <-p.full, 0
	}
	*r = p.cur.reqs[p.at]
	p.at++
	return true, nil
}

// close stops the reader and waits for it.
func (p *prefetch) close() {
	close(p.stop)
	<-p.done
}

// catch runs f and returns what it panicked with, or nil.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}
