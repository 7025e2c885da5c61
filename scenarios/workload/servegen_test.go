package workload

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestServeGenFullClients(t *testing.T) {
	for c := range 8 {
		name := fmt.Sprintf("../traces/servegen-r1/chunk-%d-trace.csv", c)
		src, err := NewServeGen(openFile(t, name), openFile(t, strings.TrimSuffix(name, "trace.csv")+"dataset.json"), name, newRNG(uint64(c)))
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := drain(src, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, reqs)
		if len(reqs) == 0 || reqs[len(reqs)-1].ArrivalNs >= 144*600e9 {
			t.Errorf("client %d: %d requests, last at %v", c, len(reqs), reqs[len(reqs)-1].ArrivalNs)
		}
	}
}

func TestServeGenWindowRate(t *testing.T) {
	// Window 3000 s of client 0: rate 0.39/s, Gamma shape 1.1977. Replaying it
	// alone 40 times gives about 40·600·0.39 = 9360 requests (SE of the count
	// ≈ √9360·cv = 88); every request lies in its own 600 s slot.
	const trace = "../traces/servegen-r1/chunk-0-trace.csv"
	windows := make([]int, 40)
	for i := range windows {
		windows[i] = 3000
	}
	src, err := NewServeGen(openFile(t, trace), openFile(t, "../traces/servegen-r1/chunk-0-dataset.json"), trace, newRNG(5), windows...)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := drain(src, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	if n := float64(len(reqs)); math.Abs(n-9360) > 400 {
		t.Errorf("%d requests, want about 9360", len(reqs))
	}
	if last := reqs[len(reqs)-1].ArrivalNs; last >= 40*600e9 {
		t.Errorf("last arrival %d ns, beyond 40 windows", last)
	}
}

func TestServeGenErrors(t *testing.T) {
	const ds = `{"0": {"input_tokens": "{10: 0.5, 20: 0.5}", "output_tokens": "{5: 1.0}"}}`
	for _, tc := range []struct {
		trace, dataset, want string
		windows              []int
	}{
		{"0,x,1,Gamma,1,1\n", ds, `t-trace.csv:1: rate_rps: "x" is not a non-negative number`, nil},
		{"0,1,1,Gamma,0,1\n", ds, `t-trace.csv:1: p1: "0" is not a non-negative number`, nil},
		{"0,1,1,Pareto,1,1\n", ds, `t-trace.csv:1: family: "Pareto" is not Gamma or Weibull`, nil},
		{"0,1,1,Gamma,1\n", ds, `t-trace.csv:1: column 1: wrong number of fields`, nil},
		{"600,0,0,,0,0\n0,0,0,,0,0\n", ds, `t-trace.csv:2: window_start_s: windows must be in increasing order`, nil},
		{"0,1,1,Gamma,1,1\n", ds, `t-trace.csv: window_start_s: no window starts at 60 s`, []int{60}},
		{"0,1,1,Gamma,1,1\n", `{"0": {"input_tokens": "{10 0.5}", "output_tokens": "{}"}}`, `t-dataset.json: 0.input_tokens: entry "10 0.5" is not tokens: probability`, nil},
		{"0,1,1,Gamma,1,1\n", `{"0": {"input_tokens": "{}", "output_tokens": "{}"}}`, `t-trace.csv:1: window_start_s: no token distribution`, nil},
		{"0,1,1,Gamma,1,1\n", `[1]`, `t-dataset.json: not a JSON object of windows`, nil},
	} {
		_, err := NewServeGen(strings.NewReader(tc.trace), strings.NewReader(tc.dataset), "t-trace.csv", newRNG(1), tc.windows...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want prefix %q", err, tc.want)
		}
	}
}
