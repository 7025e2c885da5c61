package rundir

import (
	"bufio"
	"io"
	"strconv"

	"handoff/results"
)

// Link is one network link's traffic over a run: a row of links.csv.
type Link struct {
	Name      string
	Bytes     float64 // written to the byte
	Transfers int64
	BusyNs    int64 // written in s, to the µs
	// BusyShare is the share of the run the link was busy, to 4 decimals:
	// WriteLinks computes it from the run's length, ReadLinks reads it.
	BusyShare float64
}

const linksHeader = "link,bytes,transfers,busy_s,busy_share\n"

// WriteLinks writes links.csv: one row per network link — the KV transfer
// links and the lower tiers' read links — with the bytes it carried, its
// transfers, its busy time and its share of the run (simNs long) busy.
func WriteLinks(w io.Writer, links []Link, simNs int64) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(linksHeader)
	b := make([]byte, 0, 128)
	for _, l := range links {
		b = append(b[:0], l.Name...)
		b = append(b, ',')
		b = strconv.AppendFloat(b, l.Bytes, 'f', 0, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, l.Transfers, 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(l.BusyNs)/1e9, 'f', 6, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(l.BusyNs)/float64(max(simNs, 1)), 'f', 4, 64)
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadLinks reads dir's links.csv, one Link per row in file order.
func ReadLinks(dir string) ([]Link, error) {
	c, err := openCSV(dir, results.LinksFile)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cols, err := c.columns("link", "bytes", "transfers", "busy_s", "busy_share")
	if err != nil {
		return nil, err
	}
	var links []Link
	for {
		rec, err := c.next()
		if rec == nil || err != nil {
			return links, err
		}
		if len(rec) != len(c.header) {
			return nil, c.errorf("%d fields, want %d", len(rec), len(c.header))
		}
		l := Link{Name: rec[cols[0]]}
		p := cells{c: c}
		p.float(&l.Bytes, rec[cols[1]], "bytes")
		p.int(&l.Transfers, rec[cols[2]], "transfers")
		p.seconds(&l.BusyNs, rec[cols[3]], "busy_s")
		p.float(&l.BusyShare, rec[cols[4]], "busy_share")
		if p.err != nil {
			return nil, p.err
		}
		links = append(links, l)
	}
}
