package scenarios

import (
	"strings"
	"testing"

	"handoff/sim"
)

// The client's timeouts reach the core; bad ones name their field.
func TestClientTimeoutsParsed(t *testing.T) {
	doc := strings.Replace(minimal, "workload:\n", "workload:\n  client: {timeout: 300s, first_token_timeout: 20s}\n", 1)
	_, b, err := parseBuild(t, doc, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (sim.Client{TimeoutNs: 300e9, FirstTokenTimeoutNs: 20e9}); b.Config.Client != want {
		t.Errorf("client %+v, want %+v", b.Config.Client, want)
	}
	for value, want := range map[string]string{
		"{timeout: -1s}":                 "field workload.client.timeout: bad duration",
		"{first_token_timeout: 400000h}": "field workload.client.first_token_timeout: must be in [0, 1 year]",
		"{timeot: 1s}":                   "field workload.client.timeot: unknown field",
	} {
		doc := strings.Replace(minimal, "workload:\n", "workload:\n  client: "+value+"\n", 1)
		if _, err := Parse([]byte(doc), "m.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", value, err, want)
		}
	}
}

// The front end comes from the accelerator of the pool that takes
// arrivals, the emissions from each instance's accelerator.
func TestServingFrontendAndEmission(t *testing.T) {
	doc := strings.Replace(minimal, "llama-3.1-8b", "tiny-llm", 1)
	doc = strings.Replace(doc, "h100-sxm", "tiny-gpu", 1)
	doc += strings.Replace(tinyInline, "cost_per_hour: 1}", "cost_per_hour: 1,\n       frontend_latency: 2ms, "+
		"tokenize_per_token: 500ns, first_token_emit: 300us, final_emit: 400us}", 1)
	_, b, err := parseBuild(t, doc, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (sim.Frontend{LatencyNs: 2e6, TokenizeNsPerToken: 500}); b.Config.Frontend != want {
		t.Errorf("front end %+v, want %+v", b.Config.Frontend, want)
	}
	if in := b.Config.Instances[0]; in.FirstEmitNs != 300e3 || in.FinalEmitNs != 400e3 {
		t.Errorf("emission %d, %d ns; want 300000, 400000", in.FirstEmitNs, in.FinalEmitNs)
	}
}

// The closed loop reaches the core, a --set (as a sweep axis does) can
// change its concurrency, and bad fields are named.
func TestClientClosedLoopParsed(t *testing.T) {
	doc := strings.Replace(minimal, "workload:\n", "workload:\n  client: {concurrency: 2, think_time: 5ms, requests: 4}\n", 1)
	_, b, err := parseBuild(t, doc, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (sim.Client{Concurrency: 2, ThinkNs: 5e6, Requests: 4}); b.Config.Client != want {
		t.Errorf("client %+v, want %+v", b.Config.Client, want)
	}
	_, b, err = parseBuild(t, doc, "m.yaml", Set{Path: "workload.client.concurrency", Value: "3"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Config.Client.Concurrency != 3 {
		t.Errorf("--set concurrency=3 gave %+v", b.Config.Client)
	}
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Records
	if len(r) != 4 || r[2].ArrivalNs != 0 || r[3].ArrivalNs != min(r[0].FinishNs, r[1].FinishNs, r[2].FinishNs)+5e6 {
		t.Errorf("records %+v: want 3 sent at 0, the 4th 5 ms after the first ends", res.Records)
	}
	for value, want := range map[string]string{
		"{concurrency: -1}":                 "field workload.client.concurrency: must be in [0,",
		"{concurrency: 2, think_time: -1s}": "field workload.client.think_time: bad duration",
		"{concurrency: 4, requests: 3}":     "field workload.client.requests: must be at least concurrency (4), got 3",
		"{concurrency: 4, requests: -3}":    "field workload.client.requests: must not be negative",
		"{think_time: 1s}":                  "field workload.client.concurrency: think_time and requests need a closed loop",
		"{concurrency: 4}\n  rate_scale: 2": "field workload.rate_scale: cannot be set with workload.client.concurrency",
	} {
		doc := strings.Replace(minimal, "workload:\n", "workload:\n  client: "+value+"\n", 1)
		if _, err := Parse([]byte(doc), "m.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", value, err, want)
		}
	}
}

// A gateway in front of the API servers adds its latency to the front end,
// and a P/D proxy's two calls a hop each to a P/D request's decode leg.
func TestGatewayLatency(t *testing.T) {
	_, b, err := parseBuild(t, minimal+"gateway: {latency: 120ms, hop: 5ms}\n", "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, plain, err := parseBuild(t, minimal, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Config.Frontend.LatencyNs - plain.Config.Frontend.LatencyNs; d != 120e6 || b.Config.ProxyNs != 10e6 {
		t.Errorf("gateway adds %d ns, and %d to the decode leg; want 120 ms and 10 ms", d, b.Config.ProxyNs)
	}
	for _, field := range []string{"latency", "hop"} {
		if _, err := Parse([]byte(minimal+"gateway: {"+field+": -1ms}\n"), "m.yaml"); err == nil ||
			!strings.Contains(err.Error(), "gateway."+field) {
			t.Errorf("negative gateway %s: %v", field, err)
		}
	}
}

// A saved effective scenario writes rate_scale: 1, so a closed loop with it
// loads back; only a scale that would change something is refused.
func TestClosedLoopTakesRateScaleOne(t *testing.T) {
	doc := strings.Replace(minimal, "workload:\n", "workload:\n  client: {concurrency: 4}\n  rate_scale: 1\n", 1)
	if _, err := Parse([]byte(doc), "m.yaml"); err != nil {
		t.Errorf("concurrency with rate_scale 1: %v", err)
	}
}
