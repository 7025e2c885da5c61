package sweepdir

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"handoff/results"
	"handoff/results/outdir"
)

// csvFigure is one summary column of results.csv.
type csvFigure struct {
	name  string
	value func(*results.Summary) string
}

func csvNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
func csvCount(n int64) string { return strconv.FormatInt(n, 10) }

// csvStatFigures returns the mean, p50, p90 and p99 columns of one latency.
func csvStatFigures(name string, st func(*results.Summary) *results.Stats) []csvFigure {
	return []csvFigure{
		{name + "_mean_s", func(s *results.Summary) string { return csvNum(st(s).Mean) }},
		{name + "_p50_s", func(s *results.Summary) string { return csvNum(st(s).P50) }},
		{name + "_p90_s", func(s *results.Summary) string { return csvNum(st(s).P90) }},
		{name + "_p99_s", func(s *results.Summary) string { return csvNum(st(s).P99) }},
	}
}

// csvFigures returns the summary columns of results.csv, in their fixed order.
// Wall time is left out: it differs between identical runs.
func csvFigures() []csvFigure {
	f := []csvFigure{
		{"requests_total", func(s *results.Summary) string { return csvCount(s.Requests.Total) }},
		{"requests_completed", func(s *results.Summary) string { return csvCount(s.Requests.Completed) }},
		{"requests_rejected", func(s *results.Summary) string { return csvCount(s.Requests.Rejected) }},
		{"requests_dropped", func(s *results.Summary) string { return csvCount(s.Requests.Dropped) }},
		{"requests_failed", func(s *results.Summary) string { return csvCount(s.Requests.Failed) }},
		{"requests_abandoned", func(s *results.Summary) string { return csvCount(s.Requests.Abandoned) }},
	}
	f = append(f, csvStatFigures("ttft", func(s *results.Summary) *results.Stats { return &s.TTFT })...)
	f = append(f, csvStatFigures("tpot", func(s *results.Summary) *results.Stats { return &s.TPOT })...)
	f = append(f, csvStatFigures("itl", func(s *results.Summary) *results.Stats { return &s.ITL })...)
	f = append(f, csvStatFigures("e2e", func(s *results.Summary) *results.Stats { return &s.E2E })...)
	f = append(f, []csvFigure{
		{"throughput_rps", func(s *results.Summary) string { return csvNum(s.Throughput.RequestsPerS) }},
		{"offered_rps", func(s *results.Summary) string { return csvNum(s.Throughput.OfferedPerS) }},
		{"output_tokens_per_s", func(s *results.Summary) string { return csvNum(s.Throughput.OutputTokensPerS) }},
		{"output_tokens_per_s_per_gpu", func(s *results.Summary) string { return csvNum(s.Throughput.OutputTokensPerSPerGPU) }},
		{"interactivity_tokens_per_s_per_user", func(s *results.Summary) string { return csvNum(s.Throughput.InteractivityPerUser) }},
		{"attainment", func(s *results.Summary) string { return csvNum(s.SLO.Attainment) }},
		{"slo_met", func(s *results.Summary) string { return strconv.FormatBool(s.SLO.Met) }},
		{"request_goodput_rps", func(s *results.Summary) string { return csvNum(s.SLO.RequestGoodputRPS) }},
		{"request_goodput_rps_per_gpu", func(s *results.Summary) string { return csvNum(s.SLO.RequestGoodputRPSPerGPU) }},
		{"prefix_cache_hit_rate", func(s *results.Summary) string { return csvNum(s.PrefixCacheHitRate) }},
		{"host_hit_rate", tierHitRate("host")},
		{"disk_hit_rate", tierHitRate("disk")},
		{"store_hit_rate", tierHitRate("store")},
		{"onboard_mean_s", func(s *results.Summary) string { return csvNum(s.Attribution.TTFTS["onboard"]) }},
		{"preemptions", func(s *results.Summary) string { return csvCount(s.Preemptions) }},
	}...)
	f = append(f, csvPreemptionFigures()...)
	return append(f, []csvFigure{
		{"gpus", func(s *results.Summary) string { return strconv.Itoa(s.GPUs) }},
		{"sim_time_s", func(s *results.Summary) string { return csvNum(s.SimTimeS) }},
	}...)
}

// tierHitRate is the column of a lower tier's hit rate: 0 without it.
func tierHitRate(name string) func(*results.Summary) string {
	return func(s *results.Summary) string {
		for _, t := range s.KVTiers {
			if t.Name == name {
				return csvNum(t.HitRate)
			}
		}
		return "0"
	}
}

// csvPreemptionFigures returns the columns of the preemption section.
func csvPreemptionFigures() []csvFigure {
	p := func(s *results.Summary) *results.PreemptionSummary { return &s.Preemption }
	return []csvFigure{
		{"preemption_count", func(s *results.Summary) string { return csvCount(p(s).Count) }},
		{"preemption_reprefill_tokens", func(s *results.Summary) string { return csvCount(p(s).ReprefillTokens) }},
		{"preemption_decoder_prefill_share", func(s *results.Summary) string { return csvNum(p(s).DecoderPrefillShare) }},
		{"preemption_cascades", func(s *results.Summary) string { return strconv.Itoa(p(s).Cascades) }},
		{"preemption_longest_cascade", func(s *results.Summary) string { return strconv.Itoa(p(s).LongestCascade) }},
		{"preemption_cascade_s", func(s *results.Summary) string { return csvNum(p(s).CascadeS) }},
		{"preemption_lockups", func(s *results.Summary) string { return strconv.Itoa(p(s).Lockups) }},
		{"preemption_lockup_s", func(s *results.Summary) string { return csvNum(p(s).LockupS) }},
		{"preemption_swap_outs", func(s *results.Summary) string { return csvCount(p(s).SwapOuts) }},
		{"preemption_rejections", func(s *results.Summary) string { return csvCount(p(s).Rejections) }},
		{"preemption_wasted_tokens", func(s *results.Summary) string { return csvCount(p(s).WastedTokens) }},
	}
}

// WriteResults writes dir/results.csv: a header, then one row per point
// (in the order given) with its id, its varied values and the figures of
// its summary.json in dir. The rows come from the files, so a resumed or
// merged sweep writes the same bytes as one uninterrupted run. One summary
// is in memory at a time. It returns which points dropped requests.
func WriteResults(dir string, columns []string, points []Point) (Drops, error) {
	drops := Drops{dir: dir, points: len(points)}
	err := outdir.WriteIn(dir, results.SweepResultsFile, func(w io.Writer) error {
		return writeCSV(w, columns, points, func(p Point) (results.Summary, error) {
			s, err := ReadPointSummary(dir, p.ID)
			if err == nil {
				drops.note(p, &s)
			}
			return s, err
		})
	})
	if err == nil {
		err = writeReplicas(dir, columns, points)
	}
	return drops, err
}

// Drops counts the points of a sweep whose runs left requests
// unserved (dropped or failed) and remembers the first.
type Drops struct {
	dir           string
	points, n     int
	first         Point
	dropped, reqs int64               // the first's unserved (dropped or failed) and total requests
	example       results.ReasonGroup // the first's commonest reason
	reasons       string              // the summary.json field example is from
}

// note counts p if its summary s has dropped or failed requests.
func (d *Drops) note(p Point, s *results.Summary) {
	if s.Requests.Dropped+s.Requests.Failed == 0 {
		return
	}
	if d.n++; d.n == 1 {
		d.first, d.dropped, d.reqs = p, s.Requests.Dropped+s.Requests.Failed, s.Requests.Total
		switch {
		case len(s.DropReasons) > 0:
			d.example, d.reasons = s.DropReasons[0], "drop_reasons"
		case len(s.FailReasons) > 0:
			d.example, d.reasons = s.FailReasons[0], "fail_reasons"
		}
	}
}

// Err reports the points that left requests unserved, or returns nil.
func (d *Drops) Err() error {
	if d.n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d points left requests unserved (dropped, or failed on a locked-up instance); "+
		"the first, %s, %d of %d, %d like request %d: %s (%s in %s)", d.n, d.points, d.first,
		d.dropped, d.reqs, d.example.Count, d.example.ExampleRequest, d.example.ExampleReason, d.reasons,
		PointSummaryPath(d.dir, d.first.ID))
}

// Header returns results.csv's header for a sweep varying columns: the
// id, the varied paths, then every figure's name, in their fixed order.
func Header(columns []string) []string {
	figs := csvFigures()
	row := make([]string, 0, 1+len(columns)+len(figs))
	row = append(append(row, "id"), columns...)
	for _, f := range figs {
		row = append(row, f.name)
	}
	return row
}

// writeCSV writes the table of WriteResults, with each point's
// summary from summary.
func writeCSV(w io.Writer, columns []string, points []Point,
	summary func(Point) (results.Summary, error)) error {
	figs := csvFigures()
	cw := csv.NewWriter(w)
	row := Header(columns)
	if err := cw.Write(row); err != nil {
		return err
	}
	for _, p := range points {
		sum, err := summary(p)
		if err != nil {
			return err
		}
		row = append(row[:0], p.ID)
		for _, o := range p.Overrides {
			row = append(row, o.Value)
		}
		for _, f := range figs {
			row = append(row, f.value(&sum))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Table is a results.csv read back: its header split into the varied
// columns and the figures, and its rows.
type Table struct {
	Path    string   // the file, as errors name it
	Varied  []string // the varied columns' names (scenario paths), in order
	Figures []string // the figure columns' names, in order
	Rows    []Row
}

// Row is one point's row of results.csv.
type Row struct {
	Line    int      // its line in the file
	ID      string   // the point's id
	Values  []string // one per varied column
	Figures []string // one per figure column, as written
}

// topLevelPaths are the undotted scenario paths a sweep can vary.
var topLevelPaths = []string{SeedPath, "model", "name"}

// ReadResults reads dir/results.csv. Column 0 is the point id; the varied
// columns follow it, each a scenario path (dotted, or seed, model or
// name); the first column that is not one ends them, and the figures
// follow. Every row has the header's length and the file ends with a
// line end (or the read fails: it was cut while written). Older
// tables may lack figures this version writes: look each up by name
// (Figure).
func ReadResults(dir string) (*Table, error) {
	path := filepath.Join(dir, results.SweepResultsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := endsWithNewline(f, path); err != nil {
		return nil, err
	}
	r := csv.NewReader(f)
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header line", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	n := 1
	for n < len(header) && (strings.Contains(header[n], ".") || slices.Contains(topLevelPaths, header[n])) {
		n++
	}
	t := &Table{Path: path, Varied: header[1:n], Figures: header[n:]}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		t.Rows = append(t.Rows, Row{Line: line, ID: rec[0], Values: rec[1:n], Figures: rec[n:]})
	}
}

// endsWithNewline checks that f, results.csv at path, ends with a line
// end, as every line WriteResults writes does. A file cut while written
// (a killed sweep, a full disk) ends inside a line: inside the header
// the figures after the cut would be missing and the table read as one
// with no points; inside the last field of the last row a number would
// silently be shorter. Either is refused; an empty file is left for the
// header check to name.
func endsWithNewline(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if last[0] != '\n' {
		return fmt.Errorf("%s: cut short: its last line (the header if it has no rows) has no line end; "+
			"rerunning the sweep (or merge) on its directory rewrites it", path)
	}
	return nil
}

// Figure returns the position of the named figure in Figures (and in each
// row's), or -1.
func (t *Table) Figure(name string) int { return slices.Index(t.Figures, name) }
