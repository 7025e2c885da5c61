package rundir

import (
	"io"
	"math"

	"handoff/results"
)

// WriteRequests writes requests.csv, one row per record: the format is
// results.WriteRequestsCSV's (the record's own columns), which ReadRequests
// reads back.
func WriteRequests(w io.Writer, recs []results.Record, instances []string, tiers bool, classes []string) error {
	return results.WriteRequestsCSV(w, recs, instances, tiers, classes)
}

// RequestsWriter writes requests.csv one record at a time as a run hands
// them over (a sim.RecordSink), the same bytes WriteRequests writes of the
// same records when sessions says what the records say (a workload of
// sessions gives every request a turn); classes names the run's traffic
// classes (none: no class column). The first write error stops it;
// Err reports it.
type RequestsWriter struct {
	w    io.Writer
	csv  *results.RequestsCSV
	line []byte
	err  error
}

// NewRequestsWriter writes the header to w (buffer it) and returns the
// writer of the rows.
func NewRequestsWriter(w io.Writer, instances []string, sessions, tiers bool, classes []string) *RequestsWriter {
	rw := &RequestsWriter{w: w, csv: results.NewRequestsCSV(instances, sessions, tiers, classes)}
	rw.write(rw.csv.AppendHeader(make([]byte, 0, 512)))
	return rw
}

// Record writes r's row.
func (rw *RequestsWriter) Record(r *results.Record) {
	if rw.err == nil {
		rw.write(rw.csv.AppendRow(rw.line[:0], r))
	}
}

// write writes line, keeping it as the next line's buffer.
func (rw *RequestsWriter) write(line []byte) {
	rw.line = line
	_, rw.err = rw.w.Write(line)
}

// Err is the first write error, or nil.
func (rw *RequestsWriter) Err() error { return rw.err }

// Request is one row of requests.csv: a request's identity, placement,
// sizes, latencies and outcome. Its time components, waits, session and
// tier columns are not read.
type Request struct {
	ID                              int64
	ArrivalS                        float64
	PrefillInstance, DecodeInstance string // "" when it never reached one
	InputTokens, OutputTokens       int64
	CachedTokens                    int64
	// TTFTS is NaN when no token was delivered; TPOTS NaN unless the
	// request completed with 2 or more tokens.
	TTFTS, TPOTS float64
	E2ES         float64
	Preemptions  int64
	Status       string // results.Status's String: "completed", "rejected", …
	Reason       string
}

// requestColumns are the columns ReadRequests reads, in Request's order.
var requestColumns = []string{"id", "arrival_s", "prefill_instance", "decode_instance", "input_tokens",
	"output_tokens", "cached_tokens", "ttft_s", "tpot_s", "e2e_s", "preemptions", "status", "reason"}

// ReadRequests reads dir's requests.csv, calling each with every row in
// file order (the Request is reused: copy it to keep it). Every row must
// have the header's width. O(rows), memory O(1).
func ReadRequests(dir string, each func(*Request)) error {
	c, err := openCSV(dir, results.RequestsFile)
	if err != nil {
		return err
	}
	defer c.close()
	cols, err := c.columns(requestColumns...)
	if err != nil {
		return err
	}
	var r Request
	for {
		rec, err := c.next()
		if rec == nil || err != nil {
			return err
		}
		if len(rec) != len(c.header) {
			return c.errorf("%d fields, want %d", len(rec), len(c.header))
		}
		if err := parseRequest(c, &r, rec, cols); err != nil {
			return err
		}
		each(&r)
	}
}

// parseRequest fills r from one row.
func parseRequest(c *csvFile, r *Request, rec []string, cols []int) error {
	cell := func(k int) string { return rec[cols[k]] }
	p := cells{c: c}
	p.int(&r.ID, cell(0), "id")
	p.float(&r.ArrivalS, cell(1), "arrival_s")
	r.PrefillInstance, r.DecodeInstance = cell(2), cell(3)
	p.int(&r.InputTokens, cell(4), "input_tokens")
	p.int(&r.OutputTokens, cell(5), "output_tokens")
	p.int(&r.CachedTokens, cell(6), "cached_tokens")
	p.optional(&r.TTFTS, cell(7), "ttft_s")
	p.optional(&r.TPOTS, cell(8), "tpot_s")
	p.float(&r.E2ES, cell(9), "e2e_s")
	p.int(&r.Preemptions, cell(10), "preemptions")
	r.Status, r.Reason = cell(11), cell(12)
	return p.err
}

// optional parses a number that may be empty (NaN).
func (p *cells) optional(dst *float64, cell, column string) {
	if cell == "" {
		*dst = math.NaN()
		return
	}
	p.float(dst, cell, column)
}
