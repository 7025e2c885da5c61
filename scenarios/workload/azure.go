package workload

import (
	"io"
	"time"

	"handoff/sim"
)

// NewAzure streams an Azure LLM inference trace (Patel et al., Splitwise,
// ISCA'24): CSV with a header naming the columns TIMESTAMP, ContextTokens and
// GeneratedTokens (any order; other columns ignored). Timestamps are datetimes
// "2023-11-16 18:17:03.9799600" (2023 release, naive) or with a UTC offset
// "2024-05-10 00:00:00.004000+00:00" (2024 release); rows must be sorted.
// ArrivalNs counts from the first row. A row with 0 context or generated
// tokens becomes a request with 1 (counted by Clamped). file names the input
// in errors. Cost: one small allocation per row.
func NewAzure(r io.Reader, file string) sim.Source {
	return newCSVTrace(r, file, [3]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
		parseDateTime, `a datetime like "2023-11-16 18:17:03.9799600" with an optional UTC offset`)
}

// parseDateTime parses "YYYY-MM-DD HH:MM:SS[.fraction][Z|±HH:MM|±HHMM]"
// (a 'T' may separate date and time) into ns since the Unix epoch, UTC. A
// naive datetime is taken as UTC. Years outside 1970-2200 are rejected, so
// differences fit in int64. It does not allocate.
func parseDateTime(s string) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1970 || year > 2200 ||
		month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return 0, false
	}
	rest := s[19:]
	frac, rest, ok := fraction(rest)
	if !ok {
		return 0, false
	}
	offsetS, ok := utcOffset(rest)
	if !ok {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return t.UnixNano() + frac - offsetS*1e9, true
}

// fraction parses an optional ".ddd…" prefix of s into ns (digits past the
// ninth are truncated) and returns the rest of s.
func fraction(s string) (ns int64, rest string, ok bool) {
	if len(s) == 0 || s[0] != '.' {
		return 0, s, true
	}
	i, scale := 1, int64(1e8)
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		ns += int64(s[i]-'0') * scale
		scale /= 10
	}
	return ns, s[i:], i > 1
}

// utcOffset parses "", "Z", "±HH:MM" or "±HHMM" into seconds east of UTC.
func utcOffset(s string) (int64, bool) {
	switch {
	case s == "" || s == "Z":
		return 0, true
	case len(s) != 5 && len(s) != 6, s[0] != '+' && s[0] != '-':
		return 0, false
	}
	mm := s[3:]
	if len(s) == 6 {
		if s[3] != ':' {
			return 0, false
		}
		mm = s[4:]
	}
	h, ok1 := digits(s[1:3])
	m, ok2 := digits(mm)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	off := int64(h*3600 + m*60)
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// digits parses a short all-digit string.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, len(s) > 0
}
