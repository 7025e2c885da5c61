package results

import "fmt"

// Unserved reports the records that ended dropped or failed (requests the
// cluster could never serve) as one error naming the first, or returns
// nil. source names the workload in the message. Abandoned requests are
// not counted: their client gave up, the cluster did not.
func Unserved(recs []Record, source string) error {
	var u UnservedCount
	for i := range recs {
		u.Add(&recs[i])
	}
	return u.Err(source)
}

// UnservedCount is Unserved one record at a time, the records added in
// ID order: two counts and the first unserved request.
type UnservedCount struct {
	n, total int64
	firstID  int64
	firstNs  int64
	reason   string
}

// Add counts one ended request.
func (u *UnservedCount) Add(r *Record) {
	u.total++
	if st := r.Status; st == Dropped || st == Failed {
		if u.n++; u.n == 1 {
			u.firstID, u.firstNs, u.reason = r.ID, r.ArrivalNs, r.Reason
		}
	}
}

// Err is Unserved's error for the requests added, or nil.
func (u *UnservedCount) Err(source string) error {
	if u.n == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d of %d requests could not be served; the first, request %d (arrival %.6f s): %s",
		source, u.n, u.total, u.firstID, float64(u.firstNs)/1e9, u.reason)
}
