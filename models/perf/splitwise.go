package perf

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ProfileRow is one measured row of a step-time profile (Splitwise's
// perf_model.csv): a batch of BatchSize prompts of PromptSize tokens,
// prefilled together in PromptTimeMs, then decoded TokenSize tokens at
// TokenTimeMs per token.
type ProfileRow struct {
	Model        string
	Hardware     string
	TP           int
	PromptSize   int     // tokens per prompt
	BatchSize    int     // sequences in the batch
	TokenSize    int     // output tokens generated per sequence
	PromptTimeMs float64 // prefill of the whole batch, ms
	TokenTimeMs  float64 // one decode step of the batch, ms
	Line         int     // line in the source file (1 = header)
}

// splitwiseCols are the columns ParseSplitwise needs; a header may add more
// and may suffix a unit, as in "prompt_time(ms)".
var splitwiseCols = [...]string{"model", "hardware", "prompt_size", "batch_size", "token_size",
	"prompt_time", "token_time", "tensor_parallel"}

// ParseSplitwise reads a Splitwise perf_model.csv: a header row, then one
// row per measurement. Only the columns in ProfileRow are read; others are
// ignored. file is used only in error messages, which name file, line and
// column. Cost: O(rows).
func ParseSplitwise(r io.Reader, file string) ([]ProfileRow, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: header: %w", file, csvCause(err))
	}
	idx, err := splitwiseIndex(header)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", file, err)
	}
	var rows []ProfileRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		line, _ := cr.FieldPos(0)
		row, err := splitwiseRow(rec, idx)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		row.Line = line
		rows = append(rows, row)
	}
}

// csvError names file and line of a CSV syntax error.
func csvError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %w", file, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// csvCause strips encoding/csv's own position prefix (we add file:line).
func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// splitwiseIndex maps each needed column to its position in header.
func splitwiseIndex(header []string) ([len(splitwiseCols)]int, error) {
	var idx [len(splitwiseCols)]int
	for i, want := range splitwiseCols {
		idx[i] = -1
		for j, h := range header {
			h = strings.TrimSpace(h)
			if cut, _, ok := strings.Cut(h, "("); ok {
				h = strings.TrimSpace(cut)
			}
			if h == want {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return idx, fmt.Errorf("header: missing column %q", want)
		}
	}
	return idx, nil
}

// splitwiseRow converts one record; errors name the column.
func splitwiseRow(rec []string, idx [len(splitwiseCols)]int) (ProfileRow, error) {
	row := ProfileRow{Model: strings.TrimSpace(rec[idx[0]]), Hardware: strings.TrimSpace(rec[idx[1]])}
	ints := []*int{&row.PromptSize, &row.BatchSize, &row.TokenSize}
	for i, dst := range ints {
		v, err := positiveInt(rec[idx[2+i]], splitwiseCols[2+i])
		if err != nil {
			return row, err
		}
		*dst = v
	}
	floats := []*float64{&row.PromptTimeMs, &row.TokenTimeMs}
	for i, dst := range floats {
		col := splitwiseCols[5+i]
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[idx[5+i]]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return row, fmt.Errorf("column %s: %q is not a non-negative number of ms", col, rec[idx[5+i]])
		}
		*dst = v
	}
	tp, err := positiveInt(rec[idx[7]], "tensor_parallel")
	row.TP = tp
	return row, err
}

// positiveInt parses s as an integer >= 1 for column col.
func positiveInt(s, col string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("column %s: %q is not a positive integer", col, s)
	}
	return v, nil
}

// ProfileSteps are the steps a profile row of batch and prompt measures:
// batch prompts of prompt tokens prefilled from scratch (prompt_time), and
// one decode step of batch sequences at context prompt (token_time).
func ProfileSteps(batch, prompt int) (prefill, decode Batch) {
	b, p := float64(batch), float64(prompt)
	prefill = Batch{PrefillSeqs: batch, PrefillTokens: batch * prompt, PrefillTokensSq: b * p * p,
		PrefillAttn: b * p * (p + 1) / 2}
	decode = Batch{DecodeSeqs: batch, DecodeContext: int64(batch) * int64(prompt)}
	return prefill, decode
}
