package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is an engine release as a preset: the Rules it schedules by and
// the defaults of the settings that changed with it, the connector's
// among them (what the core consults on the prefiller's side of a P/D
// handoff). A release is named by its minor version and stands for the
// last patch of it.
type Release struct {
	Engine  string // "vllm"
	Version string // "0.10" … the newest
	Rules   Rules
	// AsyncScheduling is the release's default for Config.AsyncScheduling.
	AsyncScheduling bool
	// HybridKV: beside a KV connector (a prefill or decode pool's NIXL),
	// the hybrid KV cache manager stays on, so a sliding-window layer
	// keeps only its window (llm.Model.KVGroups); off, every layer keeps
	// every token (llm.Model.UnifiedKV). Models without sliding layers do
	// not notice.
	HybridKV  bool
	Connector Connector
}

// Connector is the P/D connector's side of a release: how long a
// prefiller holds KV a decoder has not read, whether a decoder's refusal
// frees it, and what a decoder does with a load that failed.
type Connector struct {
	// Lease: the prefiller holds the KV under a lease the decoder renews
	// while it keeps the request (NIXL, vLLM PR #41383, v0.22); else it
	// frees it HoldTimeoutNs after the prefill
	// (VLLM_NIXL_ABORT_REQUEST_TIMEOUT).
	Lease         bool
	HoldTimeoutNs int64
	// NotifyRejected: a decoder that refuses a request before admitting
	// it tells the prefiller, which frees the KV at once (PR #41269,
	// v0.21); before, the KV stayed until the hold ran out.
	NotifyRejected bool
	// LoadFailure is what a decoder does with a KV load that failed
	// (KVTransferConfig.kv_load_failure_policy).
	LoadFailure LoadFailure
}

// LoadFailure is what a decoder does when its KV load fails.
type LoadFailure uint8

// The load-failure policies.
const (
	LoadRecompute LoadFailure = iota // it prefills the prompt itself
	LoadFail                         // the request fails
)

// String names the policy as scenarios do.
func (l LoadFailure) String() string { return [...]string{"recompute", "fail"}[l] }

// Latest names the newest release of an engine.
const Latest = "latest"

// ReleaseRule is one setting that changed between releases: its value
// from each version on, and the values a user may give it there.
type ReleaseRule struct {
	Field  string // the scenario field under a pool (engine.admission, …)
	Source string // where the behaviour lives upstream
	Steps  []RuleStep
}

// RuleStep is a rule's state from one release on.
type RuleStep struct {
	From    string   // the first release with it
	Value   string   // the default there
	Allowed []string // the values a user may set there (the default among them)
	Change  string   // what brought it (a pull request)
	apply   func(*Release)
}

// vllmVersions are the vLLM releases handoff has presets for, oldest
// first: v0.10 (July 2025, the release llm-d v0.2 shipped, which the
// field tests behind RFC #24256 ran) to v0.33 (November 2026).
var vllmVersions = func() []string {
	var vs []string
	for minor := 10; minor <= 33; minor++ {
		vs = append(vs, "0."+strconv.Itoa(minor))
	}
	return vs
}()

// VLLMVersions lists the vLLM releases handoff has presets for, oldest
// first, and Latest.
func VLLMVersions() []string { return append(slices.Clone(vllmVersions), Latest) }

// VLLMRules are the settings that changed between vLLM releases, each
// with the release that changed it and where it lives.
func VLLMRules() []ReleaseRule { return vllmRules }

// VLLM returns the preset of a vLLM release ("0.10" … "0.33", or
// Latest), or an error naming the releases known.
func VLLM(version string) (Release, error) {
	if version == Latest {
		version = vllmVersions[len(vllmVersions)-1]
	}
	if !slices.Contains(vllmVersions, version) {
		return Release{}, fmt.Errorf("unknown vLLM release %q (known: %s, %s)", version,
			strings.Join(vllmVersions, ", "), Latest)
	}
	r := Release{Engine: "vllm", Version: version}
	for _, rule := range vllmRules {
		if st, ok := rule.at(version); ok {
			st.apply(&r)
		}
	}
	return r, nil
}

// at is the rule's step in force at version.
func (r ReleaseRule) at(version string) (RuleStep, bool) {
	var in RuleStep
	found := false
	for _, st := range r.Steps {
		if versionLess(version, st.From) {
			break
		}
		in, found = st, true
	}
	return in, found
}

// Allowed lists the values a user may set for the rule at version.
func (r ReleaseRule) Allowed(version string) []string {
	if version == Latest {
		version = vllmVersions[len(vllmVersions)-1]
	}
	st, _ := r.at(version)
	return st.Allowed
}

// Check reports whether value may be set for the rule at version, and
// otherwise why not: the release that brought the value, or the one that
// ended it.
func (r ReleaseRule) Check(version, value string) error {
	if version == Latest {
		version = vllmVersions[len(vllmVersions)-1]
	}
	st, ok := r.at(version)
	if ok && slices.Contains(st.Allowed, value) {
		return nil
	}
	shown := value
	if value == "any" {
		shown = "a value other than 0"
	}
	for _, s := range r.Steps {
		if slices.Contains(s.Allowed, value) && versionLess(version, s.From) {
			return fmt.Errorf("%s came with vLLM %s (%s); vLLM %s has %s", shown, s.From, s.Change, version,
				strings.Join(st.Allowed, " or "))
		}
	}
	return fmt.Errorf("%s is not in vLLM %s, which has %s (%s)", shown, version, strings.Join(st.Allowed, " or "), st.Change)
}

// versionLess orders "0.9" before "0.10".
func versionLess(a, b string) bool {
	am, _ := strconv.Atoi(strings.TrimPrefix(a, "0."))
	bm, _ := strconv.Atoi(strings.TrimPrefix(b, "0."))
	return am < bm
}
