package workload

import (
	"strings"
	"testing"
)

func TestScaleAndLimit(t *testing.T) {
	const csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:00:00,10,0\n2023-11-16 18:00:01,20,2\n2023-11-16 18:00:03,30,3\n2023-11-16 18:00:03.000000003,40,0\n"
	// Rate scale 2: arrivals 0, 1, 3, 3.000000003 s become 0, 0.5, 1.5 s and
	// 1.5000000015 s, rounded to 1_500_000_002 ns.
	src := Scale(NewAzure(strings.NewReader(csv), "t.csv"), 2)
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	want := []int64{0, 500_000_000, 1_500_000_000, 1_500_000_002}
	for i, w := range want {
		if reqs[i].ArrivalNs != w || reqs[i].PromptTokens != 10*(i+1) {
			t.Errorf("request %d = %+v, want arrival %d, prompt %d", i, reqs[i], w, 10*(i+1))
		}
	}
	if ClampedCount(src) != (Clamps{Outputs: 2}) {
		t.Errorf("Clamped through Scale = %+v, want 2 outputs", ClampedCount(src))
	}

	lim := Limit(Scale(NewAzure(strings.NewReader(csv), "t.csv"), 0.5), 3)
	reqs, err = drain(lim, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || reqs[2].ArrivalNs != 6e9 {
		t.Errorf("Limit 3 at half rate: %+v, want 3 requests, the last at 6 s", reqs)
	}
	if ClampedCount(lim) != (Clamps{Outputs: 1}) {
		t.Errorf("Clamped through Limit = %+v, want 1 output (only 3 rows read)", ClampedCount(lim))
	}
	if src := NewAzure(strings.NewReader(csv), "t.csv"); Limit(src, 0) != src || Scale(src, 1) != src {
		t.Error("Limit 0 and Scale 1 should return the source itself")
	}
}

func TestTraceValidate(t *testing.T) {
	for _, tc := range []struct {
		tr   Trace
		want string
	}{
		{Trace{Format: "azure", Path: "x.csv"}, ""},
		{Trace{Format: "splitwise", Path: "x"}, `format: "splitwise" is not one of`},
		{Trace{Format: "mooncake"}, "path: must name a trace file"},
		{Trace{Format: "burstgpt", Path: "x", Limit: -1}, "limit: must be ≥ 0"},
		{Trace{Format: "azure", Path: "x", TimestampUnit: "s"}, "timestamp_unit: not for format azure (it takes format, path and limit only)"},
		{Trace{Format: "sharegpt", Path: "x"}, "arrival: required: a ShareGPT file has no timestamps"},
		{Trace{Format: "sharegpt", Path: "x", Arrival: &Arrival{Process: "poisson"}}, "arrival.rate: must be > 0"},
		{Trace{Format: "sharegpt", Path: "x", Arrival: &Arrival{Process: "poisson", Rate: 1}, BlockTokens: 2},
			"block_tokens: not for format sharegpt (it takes arrival besides format, path and limit)"},
		{Trace{Format: "csv", Path: "x"}, "columns: required"},
		{Trace{Format: "csv", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i"}}, "columns: timestamp, input_tokens and output_tokens are required"},
		{Trace{Format: "jsonl", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i", OutputTokens: "o"}}, "timestamp_unit: required"},
		{Trace{Format: "jsonl", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i", OutputTokens: "o"}, TimestampUnit: "h"},
			`timestamp_unit: "h" is not one of s, ms, us, ns, datetime`},
		{Trace{Format: "csv", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i", OutputTokens: "o", Turn: "k"}, TimestampUnit: "s"},
			"columns.turn: needs columns.session"},
		{Trace{Format: "csv", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i", OutputTokens: "o", PrefixIDs: "h"}, TimestampUnit: "s"},
			"block_tokens: set with columns.prefix_ids, and only then"},
		{Trace{Format: "csv", Path: "x", Columns: &Columns{Timestamp: "t", InputTokens: "i", OutputTokens: "o", Session: "s", PrefixIDs: "h"},
			TimestampUnit: "s", BlockTokens: 16}, "columns.prefix_ids: give session or prefix_ids, not both"},
		{Trace{Format: "otlp", Path: "x", Columns: &Columns{}}, "columns: not for format otlp"},
	} {
		err := tc.tr.Validate()
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.tr, err, tc.want)
		}
	}
}
