package rundir

import (
	"bufio"
	"io"
	"strconv"

	"handoff/results"
)

const fleetHeader = "time_s,pool,ready,requested,draining\n"

// WriteFleet writes fleet.csv: one row per change point of each pool's
// instance counts (pool by pool, in time order), each giving the counts
// from time_s on: ready (routable), requested (provisioning or loading
// weights) and draining (finishing what they hold). A pool's first row is
// at time 0. Times are s to the ns: ReadFleet gives back the points
// written.
func WriteFleet(w io.Writer, pools []results.PoolCounts) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(fleetHeader)
	b := make([]byte, 0, 128)
	for _, p := range pools {
		for _, pt := range p.Points {
			b = strconv.AppendFloat(b[:0], float64(pt.AtNs)/1e9, 'f', 9, 64)
			b = append(b, ',')
			b = append(b, p.Pool...)
			for _, n := range [...]int{pt.Ready, pt.Requested, pt.Draining} {
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(n), 10)
			}
			b = append(b, '\n')
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// ReadFleet reads dir's fleet.csv into one PoolCounts per pool, in the
// order pools first appear; a pool's points must come in time order.
func ReadFleet(dir string) ([]results.PoolCounts, error) {
	c, err := openCSV(dir, results.FleetFile)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cols, err := c.columns("time_s", "pool", "ready", "requested", "draining")
	if err != nil {
		return nil, err
	}
	var pools []results.PoolCounts
	index := map[string]int{}
	for {
		rec, err := c.next()
		if rec == nil || err != nil {
			return pools, err
		}
		if len(rec) != len(c.header) {
			return nil, c.errorf("%d fields, want %d", len(rec), len(c.header))
		}
		var pt results.CountPoint
		var n [3]int64
		p := cells{c: c}
		p.seconds(&pt.AtNs, rec[cols[0]], "time_s")
		for k, name := range []string{"ready", "requested", "draining"} {
			p.int(&n[k], rec[cols[2+k]], name)
		}
		if p.err != nil {
			return nil, p.err
		}
		pt.Ready, pt.Requested, pt.Draining = int(n[0]), int(n[1]), int(n[2])
		k, ok := index[rec[cols[1]]]
		if !ok {
			k, index[rec[cols[1]]] = len(pools), len(pools)
			pools = append(pools, results.PoolCounts{Pool: rec[cols[1]]})
		}
		if pts := pools[k].Points; len(pts) > 0 && pt.AtNs < pts[len(pts)-1].AtNs {
			return nil, c.errorf("column time_s: %s is before the pool's previous row", rec[cols[0]])
		}
		pools[k].Points = append(pools[k].Points, pt)
	}
}
