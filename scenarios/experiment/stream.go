package experiment

import (
	"handoff/results"
	"handoff/sim"
)

// Records: unless a configure function asks for KeepRecords, Run streams
// a run's records (sim.Config.Records) through a tally — the Summarizer
// the summary comes from, the unserved requests, the SLO limit shares —
// and any sink a configure function set (a RunDir's requests.csv), so the
// run holds only the records of the requests in flight and the summary
// is Summarize's (results.Summarizer, under its ExactValues). What needs
// every record after the run (--bench-json, a journey trace chosen from
// the finished run, calibration's fits) asks for KeepRecords.

// KeepRecords makes Run keep every record in Result.Records (the
// simulator's nil sink, ≈ 241 B per request) and summarize them with
// results.Summarize; any sink set before it is dropped (a RunDir then
// writes requests.csv from the records).
func KeepRecords(cfg *sim.Config) { cfg.Records = keepRecords{} }

// keepRecords marks a configuration that keeps its records; it is never
// handed one.
type keepRecords struct{}

func (keepRecords) Record(*results.Record) { panic("experiment: keepRecords handed a record") }

// keeps reports whether cfg asked for KeepRecords.
func keeps(cfg *sim.Config) bool {
	_, ok := cfg.Records.(keepRecords)
	return ok
}

// tally is the sink Run gives the simulator when records are not kept.
type tally struct {
	sum      *results.Summarizer
	unserved results.UnservedCount
	limits   results.LimitCounts
	next     sim.RecordSink // set by a configure function, or nil
}

// newTally returns the tally of a run under slo, passing each record on
// to next (may be nil).
func newTally(slo results.SLO, next sim.RecordSink) *tally {
	return &tally{sum: results.NewSummarizer(slo), limits: results.LimitCounts{SLO: slo}, next: next}
}

// Record counts r and hands it on.
func (t *tally) Record(r *results.Record) {
	t.sum.Add(r)
	t.unserved.Add(r)
	t.limits.Add(r)
	if t.next != nil {
		t.next.Record(r)
	}
}

// Unserved reports the requests res could not serve (results.Unserved),
// from its records or, when Run streamed them, its tally. source names
// the workload.
func Unserved(res *sim.Result, source string) error {
	if t, ok := res.Sink.(*tally); ok {
		return t.unserved.Err(source)
	}
	return results.Unserved(res.Records, source)
}

// LimitShares is results.LimitShares of res's requests under the run's
// SLO (slo's limits when the records were kept).
func LimitShares(res *sim.Result, slo results.SLO) (ttft, tpot float64) {
	if t, ok := res.Sink.(*tally); ok {
		return t.limits.Shares()
	}
	return results.LimitShares(res.Records, slo)
}

// sinks hands each record to several sinks in turn.
type sinks []sim.RecordSink

func (s sinks) Record(r *results.Record) {
	for _, k := range s {
		k.Record(r)
	}
}

// chain returns a sink handing each record to a (if not nil), then b.
func chain(a, b sim.RecordSink) sim.RecordSink {
	if a == nil {
		return b
	}
	return sinks{a, b}
}
