package sim

import (
	"math/rand/v2"
	"testing"

	"handoff/models/router"
)

// benchRequests is n Poisson arrivals with prompts of 64–1087 tokens and
// outputs of 1–256.
func benchRequests(n int, meanGapNs float64) []Request {
	rng := rand.New(rand.NewPCG(9, 9))
	reqs := make([]Request, n)
	atNs := int64(0)
	for i := range reqs {
		atNs += int64(rng.ExpFloat64() * meanGapNs)
		reqs[i] = Request{ArrivalNs: atNs, PromptTokens: 64 + rng.IntN(1024), OutputTokens: 1 + rng.IntN(256)}
	}
	return reqs
}

// BenchmarkEventLoop measures the core's cost per event on small clusters
// under steady load, with the linear step timer (so the models, not the
// timer, dominate): 2000 requests on one colocated instance, and on two
// prefill plus four decode instances with KV transfers. ns/event is the
// figure to watch; events/op shows the work per run.
func BenchmarkEventLoop(b *testing.B) {
	cases := []struct {
		name  string
		reqs  []Request
		build func(reqs []Request) *Config
	}{
		{"colocated", benchRequests(2000, 200_000), func(reqs []Request) *Config {
			return benchColocated(b, 2000, reqs)
		}},
		{"pd", benchRequests(2000, 50_000), func(reqs []Request) *Config {
			timer := linearTimer(cfA, cfB)
			insts := append(instances(RolePrefill, 2, engineCfg(b, 2000, 2048, 64, true), timer),
				instances(RoleDecode, 4, engineCfg(b, 2000, 2048, 64, true), timer)...)
			return withNICs(&Config{Name: "bench-pd", Instances: insts, Router: &router.LeastLoaded{},
				KVBytesPerToken: cfKVBytes, Source: &sliceSource{reqs: reqs}}, cfLink)
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				res, err := Run(tc.build(tc.reqs))
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

// benchColocated is one colocated instance with a 2048-token budget and
// room for 64 sequences.
func benchColocated(b testing.TB, blocks int, reqs []Request) *Config {
	ec := engineCfg(b, blocks, 2048, 64, true)
	return &Config{Name: "bench-colocated", Instances: instances(RoleColocated, 1, ec, linearTimer(cfA, cfB)),
		Router: &router.LeastLoaded{}, Source: &sliceSource{reqs: reqs}}
}
