package scenarios

import (
	"strings"
	"testing"

	"handoff/sim"
)

// lastArrival drains a built scenario's source.
func lastArrival(t *testing.T, b *Built) (n int, lastNs int64) {
	t.Helper()
	for {
		var r sim.Request
		ok, err := b.Config.Source.Next(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return n, lastNs
		}
		n, lastNs = n+1, r.ArrivalNs
	}
}

// servegen.paths replays the eight R1 clients together for a whole day;
// one client through paths is the same as through path.
func TestServeGenPathsDay(t *testing.T) {
	l, err := Load("testdata/servegen-day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n, last := lastArrival(t, b)
	if n < 100000 || last < 143*600e9 || last >= 144*600e9 {
		t.Fatalf("%d requests, the last at %.0f s: not a day of eight clients", n, float64(last)/1e9)
	}
	if got := len(l.Inputs()); got < 16 {
		t.Errorf("Inputs lists %d files, want the 16 of the eight clients and more", got)
	}

	one := func(w string) (int, int64) {
		doc := strings.Replace(capacityDoc, `  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 1/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}`, w, 1)
		_, b, err := parseBuild(t, doc, "day.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return lastArrival(t, b)
	}
	n1, l1 := one("  servegen: {path: traces/servegen-r1/chunk-2}")
	n2, l2 := one("  servegen: {paths: [traces/servegen-r1/chunk-2]}")
	if n1 != n2 || l1 != l2 || n1 == 0 {
		t.Fatalf("path: %d requests to %d ns; paths: %d to %d ns", n1, l1, n2, l2)
	}
	// copies: 3 of two clients is the six sources listed out, copy k of
	// client j drawing from source k·2 + j's stream; copies: 1 is none.
	n3, l3 := one("  servegen: {paths: [traces/servegen-r1/chunk-2, traces/servegen-r1/chunk-5], copies: 3}")
	n4, l4 := one("  servegen: {paths: [traces/servegen-r1/chunk-2, traces/servegen-r1/chunk-5, " +
		"traces/servegen-r1/chunk-2, traces/servegen-r1/chunk-5, traces/servegen-r1/chunk-2, traces/servegen-r1/chunk-5]}")
	if n3 != n4 || l3 != l4 || n3 <= 2*n1 {
		t.Fatalf("copies: %d requests to %d ns; listed out: %d to %d ns (one client: %d)", n3, l3, n4, l4, n1)
	}
	if n5, l5 := one("  servegen: {path: traces/servegen-r1/chunk-2, copies: 1}"); n5 != n1 || l5 != l1 {
		t.Fatalf("copies: 1 gave %d requests to %d ns, want %d to %d", n5, l5, n1, l1)
	}
}

func TestServeGenPathsErrors(t *testing.T) {
	for _, tc := range []struct{ workload, want string }{
		{"  servegen: {path: traces/servegen-r1/chunk-0, paths: [traces/servegen-r1/chunk-1]}", "workload.servegen.paths"},
		{"  servegen: {paths: [traces/servegen-r1/chunk-0, '']}", "workload.servegen.paths[1]"},
		{"  servegen: {paths: [traces/servegen-r1/chunk-0, traces/servegen-r1/nope]}", "workload.servegen.paths[1]"},
		{"  servegen: {path: traces/servegen-r1/chunk-0, copies: -1}", "workload.servegen.copies"},
	} {
		doc := strings.Replace(capacityDoc, `  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 1/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}`, tc.workload, 1)
		_, _, err := parseBuild(t, doc, "day.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.workload, err, tc.want)
		}
	}
}

// rate_scale below 1 stretches a trace: the hour of Azure conversations
// at 3,502/86,400 of its rate spans a day.
func TestRateScaleStretchesTraceToADay(t *testing.T) {
	doc := strings.Replace(capacityDoc, `  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 1/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}`, "  trace: {format: azure, path: traces/azure-conv.csv}", 1)
	_, b, err := parseBuild(t, doc, "day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, hour := lastArrival(t, b)
	doc = strings.Replace(doc, "workload:\n", "workload:\n  rate_scale: 0.04053\n", 1)
	_, b, err = parseBuild(t, doc, "day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, day := lastArrival(t, b)
	if m != n || day < 86000e9 || day > 86800e9 {
		t.Fatalf("stretched: %d requests to %.0f s (unstretched %d to %.0f s), want all of them over a day",
			m, float64(day)/1e9, n, float64(hour)/1e9)
	}
}
