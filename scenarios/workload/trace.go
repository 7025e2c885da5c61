package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"handoff/sim"
)

// ParseError reports malformed trace input: the file, the 1-based line and
// the field (column name or JSON key) that is wrong.
type ParseError struct {
	File  string // as the caller named it
	Line  int    // 1-based; 0 when the error concerns the file as a whole
	Field string // column or key name; empty when the whole line is wrong
	Msg   string // what is wrong, e.g. `"12a" is not an integer`
}

// Error formats the error as "file:line: field: msg", on one line: line
// breaks (a CSV field can hold them) are written as \n and \r.
func (e *ParseError) Error() string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.format())
}

func (e *ParseError) format() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Clamper is implemented by trace sources that raise zero token counts to 1
// (see Clamped). Scale and Limit forward it.
type Clamper interface {
	// Clamped returns how many rows so far had a zero prompt length, and
	// how many a zero output length, that the source raised to 1, and how
	// many entries it skipped.
	Clamped() Clamps
}

// Clamps counts a trace's rows whose prompt, or output, length was 0 and
// was served as 1 token: a request needs a prompt token to run and an
// output token to end. A row with both counts in both. Skipped counts the
// entries a reader left out as the format's own benchmark tool does (the
// ShareGPT pairs vllm bench serve filters).
type Clamps struct {
	Prompts, Outputs int
	Skipped          int
}

// plus is c and d together.
func (c Clamps) plus(d Clamps) Clamps {
	return Clamps{c.Prompts + d.Prompts, c.Outputs + d.Outputs, c.Skipped + d.Skipped}
}

// Warnings are the lines a run's summary reports for c: one for the
// prompts and one for the outputs served as 1 token, one for the skipped
// entries, none for no clamp.
func (c Clamps) Warnings() []string {
	var w []string
	if c.Skipped > 0 {
		w = append(w, fmt.Sprintf("workload: %d ShareGPT entries skipped as vllm bench serve skips them "+
			"(fewer than two turns; a prompt or answer under %d tokens, a prompt over %d, both over %d)",
			c.Skipped, shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotalTokens))
	}
	if c.Prompts > 0 {
		w = append(w, fmt.Sprintf("workload: %s a 0-token prompt, served as 1 token", requestsHad(c.Prompts)))
	}
	if c.Outputs > 0 {
		w = append(w, fmt.Sprintf("workload: %s 0 output tokens, served as 1 token", requestsHad(c.Outputs)))
	}
	return w
}

// requestsHad is "1 request had" or "n requests had".
func requestsHad(n int) string {
	if n == 1 {
		return "1 request had"
	}
	return strconv.Itoa(n) + " requests had"
}

// ClampedCount returns src's Clamped() counts, or none when src does not
// clamp.
func ClampedCount(src sim.Source) Clamps {
	if c, ok := src.(Clamper); ok {
		return c.Clamped()
	}
	return Clamps{}
}

// maxTraceSpanNs bounds absolute timestamps so that differences cannot
// overflow int64: ±100 years is far beyond any trace.
const maxTraceSpanNs = 100 * 365 * 24 * 3600 * 1e9

// sequencer holds what every trace reader shares: the file name for errors,
// the next request ID, the first and previous timestamps, the clamp count and
// a sticky error (once a source fails, it keeps failing the same way).
type sequencer struct {
	file    string
	nextID  int64
	firstNs int64
	prevNs  int64
	clamped Clamps
	err     error
	done    bool
}

// errorf builds a *ParseError for this file.
func (s *sequencer) errorf(line int, field, format string, args ...any) error {
	return &ParseError{File: s.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fail records err as sticky and returns it.
func (s *sequencer) fail(err error) (bool, error) {
	s.err = err
	return false, err
}

// emit fills r from one row: absNs is the row's absolute timestamp in ns
// (any epoch), prompt and output are the row's token counts (≥ 0, already
// checked). It rejects timestamps that go backwards and clamps zero lengths.
func (s *sequencer) emit(r *sim.Request, line int, field string, absNs int64, prompt, output int) error {
	if s.nextID == 0 {
		s.firstNs, s.prevNs = absNs, absNs
	}
	if absNs < s.prevNs {
		return s.errorf(line, field, "timestamp goes backwards (%s s before the previous row); the trace must be sorted",
			strconv.FormatFloat(float64(s.prevNs-absNs)/1e9, 'f', -1, 64))
	}
	s.prevNs = absNs
	if prompt == 0 {
		s.clamped.Prompts++
	}
	if output == 0 {
		s.clamped.Outputs++
	}
	*r = sim.Request{
		ID:           s.nextID,
		ArrivalNs:    absNs - s.firstNs,
		PromptTokens: max(prompt, 1),
		OutputTokens: max(output, 1),
	}
	s.nextID++
	return nil
}

// Clamped returns how many rows had a zero prompt, and a zero output,
// length raised to 1.
func (s *sequencer) Clamped() Clamps { return s.clamped }

// parseTokens parses a token count: a non-negative decimal integer. Some
// exports write counts as floats ("12.0"); an integral float is accepted.
func (s *sequencer) parseTokens(line int, field, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		f, ferr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, s.errorf(line, field, "%s is not an integer", quote(v))
		}
		n = int(math.Max(-maxTokens-1, math.Min(f, maxTokens+1))) // range checked below
	}
	if n < 0 {
		return 0, s.errorf(line, field, "%d is negative", n)
	}
	if n > maxTokens {
		return 0, s.errorf(line, field, "%d exceeds the limit of %d tokens", n, maxTokens)
	}
	return n, nil
}

// maxTokens bounds one request's prompt or output length; larger values are
// corrupt input rather than a real request.
const maxTokens = 1 << 30

// columns finds each wanted column in a CSV header (case-insensitive, spaces
// and a UTF-8 byte-order mark trimmed) and returns their indices in order.
func (s *sequencer) columns(header []string, want ...string) ([]int, error) {
	idx := make([]int, len(want))
	for i, w := range want {
		idx[i] = -1
		for j, h := range header {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
			if strings.EqualFold(h, w) {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, s.errorf(1, "header", "no column %q in %s", w, quote(strings.Join(header, ",")))
		}
	}
	return idx, nil
}
