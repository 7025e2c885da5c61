package rundir

import (
	"bufio"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"

	"handoff/results"
)

// Timeline is one instance's samples over a run: a row of timeline.csv
// per sample.
type Timeline struct {
	Instance string
	Pool     string // "" in files written before the column
	MaxSeqs  int    // the instance's max_num_seqs; 0 in files written before the column
	Samples  []Sample
	// MarksNs are the preemption times of "preemption" rows, which files
	// written before the preemptions column hold instead.
	MarksNs []int64
}

// NumTiers is the number of lower KV tiers a sample reports on: host,
// disk and store.
const NumTiers = 3

// Sample is an instance's state at one instant.
type Sample struct {
	AtNs        int64   // written in s, to the ms
	KVUsed      float64 // share of KV blocks in use, [0, 1], to 4 decimals
	Running     int32   // sequences in the running set
	Waiting     int32   // sequences queued
	Preemptions int32   // since the instance's previous sample
	// TierUsed is the share of each lower KV tier holding cached blocks
	// (written only for a run with tiers, to 4 decimals).
	TierUsed [NumTiers]float32
	// Lockup is the kind of lock-up the instance was in
	// (results.LockNames), "" when none.
	Lockup string
}

const timelineHeader = "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,lockup"

// timelineTierHeader are the columns each row ends with in a run with
// lower KV tiers.
const timelineTierHeader = ",host_used,disk_used,store_used"

// WriteTimeline writes timeline.csv: one row per sample, instance by
// instance in the order tls yields them, each row naming the instance's
// max_num_seqs and pool (for the pool views) and the kind of lock-up it
// was in (empty when none); with tiers, each row ends with the share of
// the instance's host, disk and store tiers holding blocks. A yielded
// Timeline is not kept: the caller may reuse its samples. Buffered;
// O(samples).
func WriteTimeline(w io.Writer, tls iter.Seq[Timeline], tiers bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(timelineHeader)
	if tiers {
		bw.WriteString(timelineTierHeader)
	}
	bw.WriteByte('\n')
	b := make([]byte, 0, 256)
	for tl := range tls {
		for i := range tl.Samples {
			b = appendSampleRow(b[:0], &tl, &tl.Samples[i], tiers)
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func appendSampleRow(b []byte, tl *Timeline, s *Sample, tiers bool) []byte {
	b = append(b, "sample,"...)
	b = append(b, tl.Instance...)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(s.AtNs)/1e9, 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, s.KVUsed, 'f', 4, 64)
	for _, n := range [...]int32{s.Running, s.Waiting, s.Preemptions, int32(tl.MaxSeqs)} {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, ',')
	b = append(b, tl.Pool...)
	b = append(b, ',')
	b = append(b, s.Lockup...)
	for k := 0; tiers && k < NumTiers; k++ {
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(s.TierUsed[k]), 'f', 4, 32)
	}
	return append(b, '\n')
}

// ReadTimeline reads dir's timeline.csv into one Timeline per instance, in
// the order they first appear. It reads the files of every version:
// kind,instance,time_s,kv_used,running,waiting, then preemptions,
// max_num_seqs and pool when present, then lockup when present, then the
// tier columns; a file without the preemptions column has "preemption"
// rows (MarksNs) instead. O(rows).
func ReadTimeline(dir string) ([]Timeline, error) {
	c, err := openCSV(dir, results.TimelineFile)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var tls []Timeline
	index := map[string]int{}
	cols := timelineCols(c.header)
	for {
		rec, err := c.next()
		if rec == nil || err != nil {
			return tls, err
		}
		if len(rec) < 6 {
			return nil, c.errorf("%d fields, want at least 6", len(rec))
		}
		k, ok := index[rec[1]]
		if !ok {
			k, index[rec[1]] = len(tls), len(tls)
			tls = append(tls, Timeline{Instance: rec[1]})
		}
		if err := addTimelineRow(c, &tls[k], rec, cols); err != nil {
			return nil, err
		}
	}
}

// lateCols are the positions of timeline.csv's later columns: lockup and
// the first tier column (−1: absent).
type lateCols struct{ lockup, tiers int }

// timelineCols finds the later columns in a timeline.csv header: lockup
// after pool, in files written since it came, and the tier columns after
// them. (A file without a header naming them has its tiers at 9.)
func timelineCols(header []string) lateCols {
	cols := lateCols{lockup: -1, tiers: 9}
	if len(header) > 9 && header[9] == "lockup" {
		cols.lockup, cols.tiers = 9, 10
	}
	return cols
}

// addTimelineRow adds one row of timeline.csv to tl.
func addTimelineRow(c *csvFile, tl *Timeline, rec []string, cols lateCols) error {
	p := cells{c: c}
	var s Sample
	p.seconds(&s.AtNs, rec[2], "time_s")
	if rec[0] == "preemption" {
		tl.MarksNs = append(tl.MarksNs, s.AtNs)
		return p.err
	}
	p.float(&s.KVUsed, rec[3], "kv_used")
	var n [4]int64
	p.int(&n[0], rec[4], "running")
	p.int(&n[1], rec[5], "waiting")
	if len(rec) > 6 {
		p.int(&n[2], rec[6], "preemptions")
	}
	if len(rec) > 8 {
		p.int(&n[3], rec[7], "max_num_seqs")
		tl.MaxSeqs, tl.Pool = int(n[3]), rec[8]
	}
	if cols.lockup >= 0 && len(rec) > cols.lockup {
		p.lockup(&s.Lockup, rec[cols.lockup])
	}
	for k := 0; k < NumTiers && len(rec) > cols.tiers+k; k++ {
		var v float64
		p.float(&v, rec[cols.tiers+k], []string{"host_used", "disk_used", "store_used"}[k])
		s.TierUsed[k] = float32(v)
	}
	s.Running, s.Waiting, s.Preemptions = int32(n[0]), int32(n[1]), int32(n[2])
	tl.Samples = append(tl.Samples, s)
	return p.err
}

// lockup parses a lock-up kind (results.LockNames, or empty for none)
// into dst, as the names themselves, so that samples share them.
func (p *cells) lockup(dst *string, cell string) {
	if p.err != nil || cell == "" {
		return
	}
	if k := slices.Index(results.LockNames[:], cell); k >= 0 {
		*dst = results.LockNames[k]
		return
	}
	p.err = p.c.errorf("column lockup: %q is no lock-up kind (want %s or empty)", cell,
		strings.Join(results.LockNames[:], ", "))
}
