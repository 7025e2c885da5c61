package sim

import (
	"errors"
	"strings"
	"testing"

	"handoff/models/kv"
)

// errSource yields its requests, then fails.
type errSource struct {
	sliceSource
	err error
}

func (s *errSource) Next(r *Request) (bool, error) {
	if ok, _ := s.sliceSource.Next(r); ok {
		return true, nil
	}
	return false, s.err
}

func TestConfigErrorsNameTheProblem(t *testing.T) {
	reqs := []Request{{ArrivalNs: 1, PromptTokens: 10, OutputTokens: 2}}
	tests := []struct {
		name, want string
		mutate     func(c *Config)
	}{
		{"no instances", "no instances", func(c *Config) { c.Instances = nil }},
		{"no timer", "no step timer", func(c *Config) { c.Instances[0].Timer = nil }},
		{"no router", "router", func(c *Config) { c.Router = nil }},
		{"no source", "source", func(c *Config) { c.Source = nil }},
		{"mixed roles", "mixed", func(c *Config) { c.Instances[1].Role = RoleColocated }},
		{"prefill only", "both", func(c *Config) { c.Instances[1].Role = RolePrefill }},
		{"no topology", "topology", func(c *Config) { c.Topology = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := pdConfig(t, reqs)
			tc.mutate(cfg)
			_, err := Run(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestSourceErrorsEndTheRun(t *testing.T) {
	boom := errors.New("trace.csv:3: bad output_tokens")
	cfg := colocatedConfig(t, 256, nil)
	cfg.Source = &errSource{sliceSource{reqs: []Request{{ArrivalNs: 5, PromptTokens: 10, OutputTokens: 2}}}, boom}
	if _, err := Run(cfg); !errors.Is(err, boom) {
		t.Errorf("error %v, want the source's", err)
	}
	cfg = colocatedConfig(t, 256, []Request{
		{ArrivalNs: 500, PromptTokens: 10, OutputTokens: 2},
		{ArrivalNs: 400, PromptTokens: 10, OutputTokens: 2},
	})
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "500") {
		t.Errorf("error %v, want one naming 400 and 500 ns", err)
	}
}

// TestMalformedRequestIsAnErrorNotAPanic: a source that yields a request
// with no prompt, no output, or prefix segments longer than its prompt breaks
// its contract, as one that goes back in time does; Run reports it as an
// error naming the request instead of panicking inside the engine.
func TestMalformedRequestIsAnErrorNotAPanic(t *testing.T) {
	for _, r := range []Request{
		{ArrivalNs: 1, PromptTokens: 10},
		{ArrivalNs: 1, OutputTokens: 3},
		{ArrivalNs: 1, PromptTokens: 10, OutputTokens: 3, Prefix: []kv.Segment{{ID: 1, Tokens: 11}}},
	} {
		cfg := colocatedConfig(t, 256, []Request{{ArrivalNs: 0, PromptTokens: 5, OutputTokens: 1}, r})
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("request %+v: panic %v", r, p)
				}
			}()
			if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "request 1") {
				t.Errorf("request %+v: error %v, want one naming request 1", r, err)
			}
		}()
	}
}
