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
		{Trace{Format: "sharegpt", Path: "x"}, `format: "sharegpt" is not one of`},
		{Trace{Format: "mooncake"}, "path: must name a trace file"},
		{Trace{Format: "burstgpt", Path: "x", Limit: -1}, "limit: must be ≥ 0"},
	} {
		err := tc.tr.Validate()
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.tr, err, tc.want)
		}
	}
}
