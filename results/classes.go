package results

import (
	"bytes"
	"fmt"
)

// Class is a traffic class as the summary reports it (Record.Class
// indexes RunInfo.Classes): its name and its own SLO.
type Class struct {
	Name string
	SLO  SLO
}

// ClassSummary is one traffic class's part of a run: its requests, their
// latencies (completed ones), and its SLO attainment and request goodput
// under its own SLO. Goodput is over the whole run's span (first arrival
// to last finish of every class), so the classes' goodputs add up.
type ClassSummary struct {
	Name     string        `json:"name"`
	Requests RequestCounts `json:"requests"`
	TTFT     Stats         `json:"ttft_s"`
	TPOT     Stats         `json:"tpot_s"`
	E2E      Stats         `json:"e2e_s"`
	SLO      SLOSummary    `json:"slo"`
}

// classTally summarizes each class's records apart: one Summarizer per
// class, under its SLO.
type classTally []*Summarizer

func newClassTally(classes []Class) classTally {
	if len(classes) == 0 {
		return nil
	}
	t := make(classTally, len(classes))
	for i, c := range classes {
		t[i] = NewSummarizer(c.SLO)
	}
	return t
}

// add counts r in its class; a class past the list panics (the simulator
// refuses such a request).
func (t classTally) add(r *Record) {
	if int(r.Class) >= len(t) {
		panic(fmt.Sprintf("results: record of class %d, of %d classes", r.Class, len(t)))
	}
	t[r.Class].Add(r)
}

// merge adds o's classes to t's.
func (t classTally) merge(o classTally) {
	if len(o) != len(t) {
		panic("results: merging summarizers of different classes")
	}
	for i := range t {
		t[i].Merge(o[i])
	}
}

// summaries are the classes' summaries, their goodput over runNs (the
// run's span) on gpus devices.
func (t classTally) summaries(classes []Class, runNs int64, gpus int) []ClassSummary {
	out := make([]ClassSummary, len(t))
	for i, z := range t {
		s := z.Summary(nil, RunInfo{SLO: classes[i].SLO, GPUs: gpus})
		out[i] = ClassSummary{Name: classes[i].Name, Requests: s.Requests, TTFT: s.TTFT, TPOT: s.TPOT, E2E: s.E2E, SLO: s.SLO}
		out[i].SLO.RequestGoodputRPS = perS(s.SLO.Good, runNs)
		out[i].SLO.RequestGoodputRPSPerGPU = 0
		if gpus > 0 {
			out[i].SLO.RequestGoodputRPSPerGPU = out[i].SLO.RequestGoodputRPS / float64(gpus)
		}
	}
	return out
}

// summarizeClasses is Summarize's per-class part: the records of each
// class through a Summarizer, in order, so it equals a streamed run's.
func summarizeClasses(recs []Record, info RunInfo, runNs int64) []ClassSummary {
	t := newClassTally(info.Classes)
	if t == nil {
		return nil
	}
	for i := range recs {
		t.add(&recs[i])
	}
	return t.summaries(info.Classes, runNs, info.GPUs)
}

// AllClassesMet reports whether every class met its attainment target
// (true without classes).
func (s *Summary) AllClassesMet() bool {
	for _, c := range s.Classes {
		if !c.SLO.Met {
			return false
		}
	}
	return true
}

// writeClasses writes a line per class: its requests, TTFT and TPOT p99,
// and its SLO line.
func writeClasses(b *bytes.Buffer, classes []ClassSummary, noun string) {
	for _, c := range classes {
		fmt.Fprintf(b, "%-11s %s: %d requests (%d completed), TTFT p99 %.1f ms, TPOT p99 %.2f ms; %s\n", "class",
			c.Name, c.Requests.Total, c.Requests.Completed, 1e3*c.TTFT.P99, 1e3*c.TPOT.P99, sloLine(c.SLO, noun))
	}
}
