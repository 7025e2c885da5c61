package workload

import (
	"io"
	"math"
	"strconv"
	"strings"

	"handoff/sim"
)

// NewBurstGPT streams a BurstGPT trace (Wang et al., BurstGPT, 2024): CSV
// with the header "Timestamp,Model,Request tokens,Response tokens,Total
// tokens,Log Type"; the v3 release adds "Session ID,Elapsed time" as columns
// 2-3. Columns are found by header name, so both layouts (and any column
// order) work. Timestamp is seconds (possibly fractional) from the trace start;
// rows must be sorted. ArrivalNs counts from the first row.
//
// Failed requests appear with 0 response tokens; they are kept (the server
// still ran their prefill) as requests with 1 output token, and counted by
// Clamped, as are rows with 0 request tokens. Cost: one small allocation per row.
func NewBurstGPT(r io.Reader, file string) sim.Source {
	return newCSVTrace(r, file, [3]string{"Timestamp", "Request tokens", "Response tokens"},
		parseSeconds, "a number of seconds")
}

// parseSeconds parses a decimal number of seconds into ns.
func parseSeconds(s string) (int64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f*1e9) > maxTraceSpanNs {
		return 0, false
	}
	return int64(math.Round(f * 1e9)), true
}
