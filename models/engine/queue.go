package engine

// deque is a ring buffer of sequences: O(1) push and pop at both ends.
type deque struct {
	buf  []*Seq
	head int
	n    int
}

func (d *deque) len() int { return d.n }

func (d *deque) front() *Seq { return d.buf[d.head] }

func (d *deque) at(i int) *Seq { return d.buf[(d.head+i)%len(d.buf)] }

func (d *deque) grow() {
	if d.n < len(d.buf) {
		return
	}
	buf := make([]*Seq, max(16, 2*len(d.buf)))
	for i := range d.n {
		buf[i] = d.at(i)
	}
	d.buf, d.head = buf, 0
}

func (d *deque) pushBack(s *Seq) {
	d.grow()
	d.buf[(d.head+d.n)%len(d.buf)] = s
	d.n++
}

func (d *deque) pushFront(s *Seq) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = s
	d.n++
}

func (d *deque) popBack() *Seq {
	i := (d.head + d.n - 1) % len(d.buf)
	s := d.buf[i]
	d.buf[i] = nil
	d.n--
	return s
}

// remove deletes s from the deque, keeping the order of the rest, and
// reports whether it was there. Cost O(n).
func (d *deque) remove(s *Seq) bool {
	for i := range d.n {
		if d.at(i) != s {
			continue
		}
		for j := i; j < d.n-1; j++ {
			d.buf[(d.head+j)%len(d.buf)] = d.at(j + 1)
		}
		d.buf[(d.head+d.n-1)%len(d.buf)] = nil
		d.n--
		return true
	}
	return false
}

func (d *deque) popFront() *Seq {
	s := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return s
}

// set replaces the i-th sequence from the head.
func (d *deque) set(i int, s *Seq) { d.buf[(d.head+i)%len(d.buf)] = s }
