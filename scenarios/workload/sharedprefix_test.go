package workload

import (
	"math"
	"strings"
	"testing"

	"handoff/models/kv"
	"handoff/models/units"
	"handoff/sim"
)

func sec(s float64) units.Duration { return units.Duration(s * 1e9) }

func genShared(t testing.TB, s SharedPrefix, seed uint64) []sim.Request {
	t.Helper()
	src, err := NewSharedPrefix(s, newRNG(seed))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := drain(src, 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	return reqs
}

func TestSharedPrefixStages(t *testing.T) {
	s := SharedPrefix{NumGroups: 3, UsersPerGroup: 2, SystemPromptLen: 100, QuestionLen: 20, OutputLen: 8,
		Stages: []Stage{
			{Duration: sec(10), Rate: 5},   // 50 requests in [0, 10 s]
			{Duration: sec(4), Rate: 2.5},  // 10 in [10, 14 s]
			{Duration: sec(1), Rate: 0.4},  // round(0.4) = 0: an idle second
			{Duration: sec(2), Rate: 1.25}, // round(2.5) = 3 in [15, 17 s]
		}}
	reqs := genShared(t, s, 1)
	if len(reqs) != 63 {
		t.Fatalf("%d requests, want 50 + 10 + 0 + 3 = 63", len(reqs))
	}
	for _, st := range []struct {
		first, last int
		fromS, toS  float64
	}{
		{0, 49, 0, 10}, {50, 59, 10, 14}, {60, 62, 15, 17},
	} {
		for i := st.first; i <= st.last; i++ {
			if a := reqs[i].ArrivalNs; a < int64(st.fromS*1e9) || a > int64(st.toS*1e9) {
				t.Errorf("request %d at %d ns, outside its stage [%g s, %g s]", i, a, st.fromS, st.toS)
			}
		}
	}
}

func TestSharedPrefixSegments(t *testing.T) {
	s := SharedPrefix{NumGroups: 3, UsersPerGroup: 2, SystemPromptLen: 100, QuestionLen: 20, OutputLen: 8,
		Stages: []Stage{{Duration: sec(10), Rate: 2}}}
	reqs := genShared(t, s, 2)
	seen := map[uint64]int{}
	for i, r := range reqs {
		group := uint64(i%6) / 2 // 6 users cycling; users 2g and 2g+1 are in group g
		want := []kv.Segment{{ID: segSystemPrompt | group, Tokens: 100}, {ID: segQuestion | uint64(i%6), Tokens: 20}}
		if !equalSegs(r.Prefix, want) || r.PromptTokens != 120 || r.OutputTokens != 8 {
			t.Fatalf("request %d = %+v, want prefix %v, 120 prompt, 8 output tokens", i, r, want)
		}
		seen[r.Prefix[0].ID]++
		seen[r.Prefix[1].ID]++
	}
	// A returning user repeats its question: 20 requests over 6 users.
	for u, want := range []int{4, 4, 3, 3, 3, 3} {
		if got := seen[segQuestion|uint64(u)]; got != want {
			t.Errorf("user %d asked %d times, want %d", u, got, want)
		}
	}
	// 20 requests cycle over 6 users in runs of 2 per group (requests 0-1, 6-7, 12-13, 18-19 → 8; 2-3, 8-9, 14-15 → 6; 4-5, 10-11, 16-17 → 6).
	for g, want := range []int{8, 6, 6} {
		if got := seen[segSystemPrompt|uint64(g)]; got != want {
			t.Errorf("group %d has %d requests, want %d", g, got, want)
		}
	}
	// A zero-length system prompt is omitted.
	s.SystemPromptLen = 0
	if r := genShared(t, s, 2)[0]; len(r.Prefix) != 1 || r.Prefix[0].ID != segQuestion || r.PromptTokens != 20 {
		t.Errorf("without a system prompt: %+v", r)
	}
}

func TestSharedPrefixArrivalsUniform(t *testing.T) {
	// 20000 arrivals conditioned on the count in a 1000 s stage are uniform:
	// mean position 500 s (SE 1000/√(12·20000) = 2 s); gaps are ~exponential
	// with mean 1000/20001 s and CV 1 (SE of the sd about 0.7%).
	s := SharedPrefix{NumGroups: 1, UsersPerGroup: 1, QuestionLen: 1, OutputLen: 1,
		Stages: []Stage{{Duration: sec(1000), Rate: 20}}}
	reqs := genShared(t, s, 3)
	if len(reqs) != statN {
		t.Fatalf("%d requests, want %d", len(reqs), statN)
	}
	pos := make([]float64, len(reqs))
	gaps := make([]float64, len(reqs)-1)
	for i, r := range reqs {
		pos[i] = float64(r.ArrivalNs) / 1e9
		if i > 0 {
			gaps[i-1] = pos[i] - pos[i-1]
		}
	}
	mean, _ := meanStd(pos)
	gapMean, gapStd := meanStd(gaps)
	if math.Abs(mean-500) > 6 {
		t.Errorf("mean arrival %.2f s, want 500 ± 6", mean)
	}
	if math.Abs(gapMean-0.05) > 0.05*0.01 || math.Abs(gapStd/gapMean-1) > 0.03 {
		t.Errorf("gap mean %.5f s, CV %.3f; want 0.05, 1", gapMean, gapStd/gapMean)
	}
}

func TestSharedPrefixDeterminism(t *testing.T) {
	s := SharedPrefix{NumGroups: 4, UsersPerGroup: 3, SystemPromptLen: 50, QuestionLen: 5, OutputLen: 2,
		Stages: []Stage{{Duration: sec(30), Rate: 3}, {Duration: sec(30), Rate: 6}}}
	a, b, c := genShared(t, s, 9), genShared(t, s, 9), genShared(t, s, 10)
	diff := false
	for i := range a {
		if !equalReq(a[i], b[i]) {
			t.Fatalf("same seed: request %d differs", i)
		}
		diff = diff || a[i].ArrivalNs != c[i].ArrivalNs
	}
	if !diff {
		t.Error("different seeds gave the same arrivals")
	}
}

func TestSharedPrefixValidate(t *testing.T) {
	ok := SharedPrefix{NumGroups: 1, UsersPerGroup: 1, SystemPromptLen: 1, QuestionLen: 1, OutputLen: 1,
		Stages: []Stage{{Duration: sec(1), Rate: 1}}}
	for _, tc := range []struct {
		edit func(s *SharedPrefix)
		want string
	}{
		{func(s *SharedPrefix) { s.NumGroups = 0 }, "num_unique_system_prompts: must be in [1,"},
		{func(s *SharedPrefix) { s.UsersPerGroup = -2 }, "num_users_per_system_prompt: must be in [1,"},
		{func(s *SharedPrefix) { s.SystemPromptLen, s.QuestionLen = 0, 0 }, "question_len: system_prompt_len + question_len must be ≥ 1"},
		{func(s *SharedPrefix) { s.OutputLen = 0 }, "output_len: must be in [1,"},
		{func(s *SharedPrefix) { s.Stages = nil }, "stages: must list at least one stage"},
		{func(s *SharedPrefix) { s.Stages = []Stage{{Duration: sec(1), Rate: 1}, {Rate: 1}} }, "stages[1].duration: must be > 0"},
		{func(s *SharedPrefix) { s.Stages = []Stage{{Duration: sec(1), Rate: -1}} }, "stages[0].rate: must be ≥ 0"},
		{func(s *SharedPrefix) { s.Stages = []Stage{{Duration: sec(1e6), Rate: 1e9}} }, "stages: send 1e+15 requests in all"},
	} {
		s := ok
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid spec rejected: %v", err)
	}
}
