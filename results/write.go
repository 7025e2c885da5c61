package results

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// WriteJSON writes s as indented JSON (two spaces) with a trailing newline.
// Key order is fixed: struct fields in declaration order, map keys sorted.
// NaN and ±Inf cannot occur in a Summary built by Summarize.
func WriteJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// ReadSummary reads a summary.json WriteJSON wrote; errors name path.
func ReadSummary(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	return ParseSummary(b, path)
}

// ParseSummary decodes a summary.json read from the file name names (for
// errors).
func ParseSummary(data []byte, name string) (Summary, error) {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// RequestsCSVHeader is the first line WriteRequestsCSV writes. Its last
// columns are Record.Time, one per TimeNames entry with "_s" appended,
// then Record.Waits, "wait_" and each WaitNames entry and "_s".
const RequestsCSVHeader = "id,arrival_s,prefill_instance,decode_instance,input_tokens," +
	"output_tokens,cached_tokens,ttft_s,tpot_s,e2e_s,preemptions,status,reason,rejections,wasted_tokens," +
	"frontend_s,router_queue_s,prefill_queue_s,prefill_compute_s,onboard_s,transfer_s,decode_queue_first_s," +
	"decode_compute_s,decode_queue_s,reprefill_s,swap_s,rejection_s,emit_s," +
	"wait_busy_s,wait_max_num_seqs_s,wait_kv_blocks_s,wait_token_budget_s"

// SessionColumns are the columns WriteRequestsCSV appends after
// RequestsCSVHeader's when a record belongs to a session: the session
// (dense from 0) and the turn in it (from 1); both are empty on a record
// outside any session.
const SessionColumns = ",session,turn"

// ClassColumn is the column WriteRequestsCSV appends last when the run has
// traffic classes: each request's class, by name.
const ClassColumn = ",class"

// WriteRequestsCSV writes one RFC 4180 line per record after
// RequestsCSVHeader (then SessionColumns when any record has a turn,
// TierColumns when tiers: the run has lower KV tiers, and ClassColumn when
// classes names the run's traffic classes, which Record.Class indexes). Times are seconds
// with 6 decimals (µs resolution);
// instance columns hold instances[index] and are empty for -1; ttft_s is
// empty when no token was delivered, tpot_s unless the request completed
// with ≥ 2 tokens; e2e_s is the time from arrival to the end, whatever the
// status. An index with no name in instances is written as the number.
// The time components are seconds with 6 decimals.
// Buffered; no fmt; O(len(recs)).
func WriteRequestsCSV(w io.Writer, recs []Record, instances []string, tiers bool, classes []string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	c := NewRequestsCSV(instances, hasSessions(recs), tiers, classes)
	line := c.AppendHeader(make([]byte, 0, 512))
	for i := range recs {
		if _, err := bw.Write(line); err != nil {
			return err
		}
		line = c.AppendRow(line[:0], &recs[i])
	}
	if _, err := bw.Write(line); err != nil {
		return err
	}
	return bw.Flush()
}

// RequestsCSV makes WriteRequestsCSV's lines one record at a time, for a
// writer that gets the records as they end: its header names the columns
// once, before any record, so whether there are session columns is said
// up front (sessions: the workload yields sessions, whose every request
// has a turn) rather than found in the records.
type RequestsCSV struct {
	instances       []string
	sessions, tiers bool
	classes         []string
}

// NewRequestsCSV returns the lines of requests.csv for a run with these
// instance names, session columns, tier columns and class names (none: no
// class column).
func NewRequestsCSV(instances []string, sessions, tiers bool, classes []string) *RequestsCSV {
	return &RequestsCSV{instances: instances, sessions: sessions, tiers: tiers, classes: classes}
}

// AppendHeader appends the header line, newline included, to b.
func (c *RequestsCSV) AppendHeader(b []byte) []byte {
	b = append(b, RequestsCSVHeader...)
	if c.sessions {
		b = append(b, SessionColumns...)
	}
	if c.tiers {
		b = append(b, TierColumns...)
	}
	if len(c.classes) > 0 {
		b = append(b, ClassColumn...)
	}
	return append(b, '\n')
}

// AppendRow appends r's line, newline included, to b.
func (c *RequestsCSV) AppendRow(b []byte, r *Record) []byte {
	b = appendCSVRecord(b, r, c.instances)
	if c.sessions {
		b = appendSessionFields(b[:len(b)-1], r)
	}
	if c.tiers {
		b = appendTierFields(b[:len(b)-1], r)
	}
	if len(c.classes) > 0 {
		b = append(b[:len(b)-1], ',')
		b = appendCSVField(b, instanceName(int32(r.Class), c.classes))
		b = append(b, '\n')
	}
	return b
}

// appendCSVRecord appends r's CSV line, newline included, to b.
func appendCSVRecord(b []byte, r *Record, instances []string) []byte {
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, ',')
	b = appendSeconds(b, r.ArrivalNs)
	b = append(b, ',')
	b = appendCSVField(b, instanceName(r.PrefillInstance, instances))
	b = append(b, ',')
	b = appendCSVField(b, instanceName(r.DecodeInstance, instances))
	for _, n := range [...]int32{r.PromptTokens, r.OutputTokens, r.CachedTokens} {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, ',')
	if r.OutputTokens > 0 {
		b = appendSeconds(b, r.FirstTokenNs-r.ArrivalNs)
	}
	b = append(b, ',')
	if tpot, ok := tpotNs(r); ok && r.Status == Completed {
		b = strconv.AppendFloat(b, tpot/1e9, 'f', 6, 64)
	}
	b = append(b, ',')
	b = appendSeconds(b, r.FinishNs-r.ArrivalNs)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Preemptions), 10)
	b = append(b, ',')
	b = append(b, r.Status.String()...)
	b = append(b, ',')
	b = appendCSVField(b, r.Reason)
	for _, n := range [...]int32{int32(r.Rejections), r.WastedTokens} {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	for _, ns := range r.Time {
		b = append(b, ',')
		b = appendSeconds(b, ns)
	}
	for _, ns := range r.Waits {
		b = append(b, ',')
		b = appendSeconds(b, ns)
	}
	return append(b, '\n')
}

// hasSessions reports whether any record belongs to a session.
func hasSessions(recs []Record) bool {
	for i := range recs {
		if recs[i].Turn > 0 {
			return true
		}
	}
	return false
}

// appendSessionFields appends r's session and turn columns and the newline.
func appendSessionFields(b []byte, r *Record) []byte {
	b = append(b, ',')
	if r.Turn > 0 {
		b = strconv.AppendInt(b, int64(r.Session), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Turn), 10)
	} else {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendTierFields appends r's tier columns and the newline.
func appendTierFields(b []byte, r *Record) []byte {
	for _, n := range r.TierTokens {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, '\n')
}

// appendSeconds appends ns as seconds with 6 decimals.
func appendSeconds(b []byte, ns int64) []byte {
	return strconv.AppendFloat(b, float64(ns)/1e9, 'f', 6, 64)
}

// instanceName returns instances[i], "" for a negative index, or the index
// in decimal when instances has no name for it.
func instanceName(i int32, instances []string) string {
	if i < 0 {
		return ""
	}
	if int(i) >= len(instances) {
		return strconv.Itoa(int(i))
	}
	return instances[i]
}

// appendCSVField appends f, quoted (RFC 4180) if it holds a comma, quote or
// line break.
func appendCSVField(b []byte, f string) []byte {
	if !strings.ContainsAny(f, ",\"\r\n") {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}
