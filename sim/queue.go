package sim

// Event classes order events that fall at the same nanosecond: a finished
// transfer is applied before a finished step, and both before an arrival, so
// that an arriving request sees the cluster as of the end of that instant;
// an instance whose state changed while other events were due at the same
// instant plans its next step last (classKick), seeing all of them.
const (
	classNetwork uint8 = iota
	classStep
	classTimeout
	classStaging
	classRecompile
	classWatchdog
	classClient
	classArrival
	classFrontend
	classRelay
	classNetStart
	classKick
)

// event is one scheduled happening. key packs the class (top byte) and a
// sequence number, so (at, key) is a total order. An instance's step and
// kick events (pushInstance) carry its index and a generation instead of
// the sequence number: same-instant steps, and same-instant kicks, go in
// instance order whenever they were pushed, so that an instance whose
// steps advance without events (run.go) can push its step later and keep
// its place.
type event struct {
	at  int64
	key uint64
	arg int32 // instance index (steps) or network version (network)
}

func (e *event) class() uint8 { return uint8(e.key >> 56) }

func (a *event) before(b *event) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

// eventQueue is a 4-ary min-heap of events: shallower than a binary heap, so
// fewer cache misses per pop. Push and pop cost O(log₄ n).
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) push(at int64, class uint8, arg int32) {
	q.seq++
	q.h = append(q.h, event{at: at, key: uint64(class)<<56 | q.seq, arg: arg})
	q.up(len(q.h) - 1)
}

// pushInstance queues instance i's event of class (classStep or
// classKick), tagged with generation gen (see replica.stepGen).
func (q *eventQueue) pushInstance(at int64, class uint8, i int32, gen uint32) {
	q.h = append(q.h, event{at: at, key: uint64(class)<<56 | uint64(i)<<32 | uint64(gen), arg: i})
	q.up(len(q.h) - 1)
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	if last > 0 {
		q.down(0)
	}
	return top
}

func (q *eventQueue) up(i int) {
	e := q.h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&q.h[p]) {
			break
		}
		q.h[i] = q.h[p]
		i = p
	}
	q.h[i] = e
}

func (q *eventQueue) down(i int) {
	e := q.h[i]
	n := len(q.h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		for k := c + 1; k < min(c+4, n); k++ {
			if q.h[k].before(&q.h[best]) {
				best = k
			}
		}
		if !q.h[best].before(&e) {
			break
		}
		q.h[i] = q.h[best]
		i = best
	}
	q.h[i] = e
}
