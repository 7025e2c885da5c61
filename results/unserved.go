package results

import "fmt"

// Unserved reports the records that ended dropped or failed (requests the
// cluster could never serve) as one error naming the first, or returns
// nil. source names the workload in the message. Abandoned requests are
// not counted: their client gave up, the cluster did not.
func Unserved(recs []Record, source string) error {
	n, first := 0, -1
	for i := range recs {
		if st := recs[i].Status; st == Dropped || st == Failed {
			if n++; first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return nil
	}
	r := &recs[first]
	return fmt.Errorf("%s: %d of %d requests could not be served; the first, request %d (arrival %.6f s): %s",
		source, n, len(recs), r.ID, float64(r.ArrivalNs)/1e9, r.Reason)
}
