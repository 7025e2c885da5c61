package perf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// distServeEntry is one (model, tp) object of a DistServe profiler file.
type distServeEntry struct {
	Threshold   *float64  `json:"decoding_large_small_bs_threshold"`
	Prefill     []float64 `json:"prefill"`
	DecodeSmall []float64 `json:"decoding_smallbs"`
	DecodeLarge []float64 `json:"decoding_largebs"`
}

// ParseDistServe reads a DistServe profiler file (JSON: model name → TP
// degree as a string → {"prefill", "decoding_smallbs", "decoding_largebs":
// [a, b, c], "decoding_large_small_bs_threshold": n}) and returns the
// coefficients for model (e.g. "facebook/opt-13b") at tp. file is used only
// in error messages. Errors name the file and, for malformed JSON, the line;
// for a missing model or tp they list what the file holds; for a bad entry
// they name the field.
func ParseDistServe(r io.Reader, file string, model string, tp int) (PolyCoeffs, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return PolyCoeffs{}, fmt.Errorf("%s: %w", file, err)
	}
	var doc map[string]map[string]distServeEntry
	if err := json.Unmarshal(data, &doc); err != nil {
		return PolyCoeffs{}, jsonError(file, data, err)
	}
	byTP, ok := doc[model]
	if !ok {
		return PolyCoeffs{}, fmt.Errorf("%s: no model %q (have %s)", file, model, keyList(doc))
	}
	e, ok := byTP[strconv.Itoa(tp)]
	if !ok {
		return PolyCoeffs{}, fmt.Errorf("%s: model %q has no tp %d (have tp %s)", file, model, tp, keyList(byTP))
	}
	return e.coeffs(fmt.Sprintf("%s: %s tp %d", file, model, tp))
}

// coeffs validates e and converts it; where prefixes error messages.
func (e *distServeEntry) coeffs(where string) (PolyCoeffs, error) {
	var c PolyCoeffs
	fields := []struct {
		name string
		src  []float64
		dst  *[3]float64
	}{
		{"prefill", e.Prefill, &c.Prefill},
		{"decoding_smallbs", e.DecodeSmall, &c.DecodeSmall},
		{"decoding_largebs", e.DecodeLarge, &c.DecodeLarge},
	}
	for _, f := range fields {
		if len(f.src) != 3 {
			return c, fmt.Errorf("%s: field %s: want 3 coefficients [a, b, c], got %d", where, f.name, len(f.src))
		}
		copy(f.dst[:], f.src)
	}
	t := e.Threshold
	if t == nil || *t < 1 || *t != math.Trunc(*t) || *t > 1e9 {
		return c, fmt.Errorf("%s: field decoding_large_small_bs_threshold: missing or not a positive integer", where)
	}
	c.DecodeBatchThreshold = int(*t)
	return c, nil
}

// jsonError turns a decoding error into one naming file and line.
func jsonError(file string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return fmt.Errorf("%s: %w", file, err)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	return fmt.Errorf("%s:%d: %w", file, line, err)
}

// keyList returns m's keys sorted, comma-separated, for error messages.
func keyList[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, strconv.Quote(k))
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}
