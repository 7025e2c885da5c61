package engine

// Where a sequence's time on an instance went. Every nanosecond from
// Enqueue (or KVArrived) to the sequence's last step falls in exactly one
// bucket, so the buckets sum to its time here.
const (
	AcctQueue     = iota // waiting for admission or for a step, not preempted
	AcctCompute          // inside steps that computed its tokens
	AcctReprefill        // from a recompute preemption until its context is recomputed
	AcctSwap             // swapped out to the host tier, until swapped back in
	acctBuckets
)

// Acct is a sequence's time on this instance by bucket, in nanoseconds.
type Acct [acctBuckets]int64

// Total is the sum of all buckets.
func (a *Acct) Total() int64 { return a[AcctQueue] + a[AcctCompute] + a[AcctReprefill] + a[AcctSwap] }

// Sub returns a − b bucket by bucket (time spent between two snapshots).
func (a Acct) Sub(b Acct) Acct {
	for i := range a {
		a[i] -= b[i]
	}
	return a
}

// account charges a scheduled sequence for the time since its last mark:
// the wait before the step to the bucket its state calls for, the step
// itself to compute (or to re-prefill while it recomputes its context).
func (s *Seq) account(startNs, endNs int64) {
	wait, work := AcctQueue, AcctCompute
	switch {
	case s.reprefill:
		wait, work = AcctReprefill, AcctReprefill
	case s.swappedIn:
		wait = AcctSwap
	}
	s.Acct[wait] += startNs - s.markNs
	s.Acct[work] += endNs - startNs
	s.markNs = endNs
	s.swappedIn = false
}

// MarkNs is the time the sequence's accounting has reached: its last step's
// end, or when it was enqueued or its KV arrived.
func (s *Seq) MarkNs() int64 { return s.markNs }
