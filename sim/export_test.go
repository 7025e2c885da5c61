package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"handoff/models/router"
	"handoff/results"
)

// SplitCase is the swarm's case of seed (swarmCase) with what couples its
// instances taken out where a field can say so — its router round-robin,
// no fleet changes, failures, client, tracer, sessions or
// context ranges, and a twin for a lone colocated instance — and, in half
// the cases, a timeline on a fine grid of few samples, so that it coarsens.
// Whether it splits is still NewSplit's to say (P/D, tiers, data-parallel
// groups and unequal capacities stay).
func SplitCase(t testing.TB, seed uint64) *Config {
	cfg := swarmCase(t, seed)
	cfg.Router = &router.RoundRobin{}
	cfg.Scaling, cfg.Faults, cfg.FaultRates, cfg.Tracer = nil, nil, nil, nil
	cfg.Client = Client{}
	rng := rand.New(rand.NewPCG(seed, 0x5b117))
	if rng.IntN(2) == 0 {
		cfg.TimelineIntervalNs, cfg.TimelineSamples = 1+rng.Int64N(2_000_000), 3+rng.IntN(20)
	}
	if _, ok := cfg.Source.(SessionSource); ok {
		cfg.Source = &sliceSource{reqs: swarmRequests(rng)}
	}
	for i := range cfg.Instances {
		cfg.Instances[i].ContextRange = [2]int{}
	}
	if len(cfg.Instances) == 1 && cfg.Instances[0].Role == RoleColocated {
		twin := cfg.Instances[0]
		twin.Name += "-twin"
		cfg.Instances = append(cfg.Instances, twin)
	}
	return cfg
}

// SameSplitResult is sameResult with the timelines, less the event count
// and the runs' counts, which measure the core's work and which a split
// run counts differently (split.go).
func SameSplitResult(a, b *Result) string {
	if a.Requests != b.Requests || !reflect.DeepEqual(a.Timelines, b.Timelines) {
		return fmt.Sprintf("requests %d vs %d, or timelines differ:\n%+v\n%+v", a.Requests, b.Requests, a.Timelines, b.Timelines)
	}
	x, y := *a, *b
	x.Events, y.Events = 0, 0
	return sameResult(&x, &y)
}

// Collected returns the records cfg's sink took, when it is the swarm's
// collecting sink; nil otherwise.
func Collected(cfg *Config) []results.Record {
	if c, ok := cfg.Records.(*collect); ok {
		return c.recs
	}
	return nil
}

// SplitCaseWide is SplitCase with its colocated fleet copied four times
// over (the copies renamed), so that a split run has many instances a
// shard and shards of unequal size.
func SplitCaseWide(t testing.TB, seed uint64) *Config {
	cfg := SplitCase(t, seed)
	if len(cfg.Instances) == 0 || cfg.Instances[0].Role != RoleColocated {
		return cfg
	}
	n := len(cfg.Instances)
	for k := 1; k < 4; k++ {
		for i := range n {
			in := cfg.Instances[i]
			in.Name = fmt.Sprintf("%s-copy%d", in.Name, k)
			cfg.Instances = append(cfg.Instances, in)
		}
	}
	return cfg
}
