package workload

import (
	"encoding/json"
	"io"
	"math"

	"handoff/models/kv"
	"handoff/sim"
)

// MooncakeBlockTokens is the number of prompt tokens one Mooncake hash id
// stands for in the published traces.
const MooncakeBlockTokens = 512

// NewMooncake streams a Mooncake trace (Qin et al., Mooncake, FAST'25): one
// JSON object per line, {"timestamp": ms, "input_length": n, "output_length":
// m, "hash_ids": [...]}; other keys are ignored. Each hash id names one block
// of blockTokens prompt tokens (MooncakeBlockTokens in the published traces);
// equal id prefixes mean reusable KV. The prompt becomes one kv.Segment per
// id, ID used as given, Tokens = blockTokens except the last, which holds the
// remaining input_length − blockTokens·(n−1) tokens (at most blockTokens; if
// input_length exceeds blockTokens·n the excess is unique to the request).
// input_length ≤ blockTokens·(n−1) is an error. Rows must be sorted by
// timestamp; ArrivalNs counts from the first row. Zero lengths become 1
// (counted by Clamped). Blank lines are skipped. Panics if blockTokens < 1.
// Cost: one Prefix slice plus encoding/json's allocations per row.
func NewMooncake(r io.Reader, file string, blockTokens int) sim.Source {
	if blockTokens < 1 {
		panic("workload: mooncake block tokens must be positive")
	}
	return &mooncake{sequencer: sequencer{file: file}, jsonLines: newJSONLines(r), blockTokens: blockTokens}
}

type mooncake struct {
	sequencer
	jsonLines
	blockTokens int
	row         mooncakeRow // reused: its HashIDs backing array survives rows
}

type mooncakeRow struct {
	Timestamp    float64  `json:"timestamp"`
	InputLength  int      `json:"input_length"`
	OutputLength int      `json:"output_length"`
	HashIDs      []uint64 `json:"hash_ids"`
}

// missingInt marks an integer key absent from a row (NaN does the same for
// the timestamp): JSON decoding never produces these values.
const missingInt = math.MinInt

// Next implements sim.Source.
func (m *mooncake) Next(r *sim.Request) (bool, error) {
	if m.err != nil || m.done {
		return false, m.err
	}
	b, err := m.next(m.file)
	switch {
	case err != nil:
		return m.fail(err)
	case b != nil:
		if err := m.parse(r, b); err != nil {
			return m.fail(err)
		}
		return true, nil
	}
	m.done = true
	return false, nil
}

// parse decodes one non-blank line into r.
func (m *mooncake) parse(r *sim.Request, b []byte) error {
	row := &m.row
	row.Timestamp, row.InputLength, row.OutputLength = math.NaN(), missingInt, missingInt
	row.HashIDs = row.HashIDs[:0]
	if err := json.Unmarshal(b, row); err != nil {
		return m.jsonError(m.line, err)
	}
	tsNs, err := m.timestampNs(row.Timestamp)
	if err != nil {
		return err
	}
	if err := m.checkLen("input_length", row.InputLength); err != nil {
		return err
	}
	if err := m.checkLen("output_length", row.OutputLength); err != nil {
		return err
	}
	prefix, err := m.segments(row.HashIDs, row.InputLength)
	if err != nil {
		return err
	}
	if err := m.emit(r, m.line, "timestamp", tsNs, row.InputLength, row.OutputLength); err != nil {
		return err
	}
	r.Prefix = prefix
	return nil
}

func (m *mooncake) timestampNs(ms float64) (int64, error) {
	if math.IsNaN(ms) {
		return 0, m.errorf(m.line, "timestamp", "missing")
	}
	if math.Abs(ms*1e6) > maxTraceSpanNs {
		return 0, m.errorf(m.line, "timestamp", "%g ms is out of range", ms)
	}
	return int64(math.Round(ms * 1e6)), nil
}

func (m *mooncake) checkLen(key string, n int) error {
	switch {
	case n == missingInt:
		return m.errorf(m.line, key, "missing")
	case n < 0:
		return m.errorf(m.line, key, "%d is negative", n)
	case n > maxTokens:
		return m.errorf(m.line, key, "%d exceeds the limit of %d tokens", n, maxTokens)
	}
	return nil
}

// segments turns hash ids into prompt segments covering inputLen tokens.
func (m *mooncake) segments(ids []uint64, inputLen int) ([]kv.Segment, error) {
	prefix, ok := blockSegments(ids, inputLen, m.blockTokens)
	if !ok {
		n := len(ids)
		return nil, m.errorf(m.line, "hash_ids", "%d blocks of %d tokens need input_length > %d, got %d",
			n, m.blockTokens, m.blockTokens*(n-1), inputLen)
	}
	return prefix, nil
}
