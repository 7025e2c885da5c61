package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"handoff/sim"
)

// dynamoFlagsEvery sets every flag handoff models away from its default,
// over lines and continuations, with --flag=value and the negated
// switches; dynamoFlagsInline is the same router.dynamo section by hand.
const dynamoFlagsEvery = `# a frontend's router flags
--router-mode kv --router-kv-overlap-score-credit 0.8 \
  --router-kv-overlap-score-credit-decay=0.5
--router-prefill-load-scale 2 --kv-overlap-score-weight 1.5
--router-host-cache-hit-weight 0.5 --router-disk-cache-hit-weight 0.1
--shared-cache-multiplier 0.3 --router-temperature '0.5'
--router-queue-threshold 2 --router-queue-policy wspt
--no-router-kv-events --router-ttl-secs 30 --no-router-assume-kv-reuse
--active-decode-blocks-threshold 0.9 --active-prefill-tokens-threshold 20000
--active-prefill-tokens-threshold-frac=8 --router-session-affinity-ttl-secs 60
--router-track-output-blocks
`

const dynamoFlagsInline = `{overlap_score_credit: 0.8, overlap_score_credit_decay: 0.5, prefill_load_scale: 2,
    kv_overlap_score_weight: 1.5, host_cache_hit_weight: 0.5, disk_cache_hit_weight: 0.1,
    shared_cache_multiplier: 0.3, temperature: 0.5, router_queue_threshold: 2, router_queue_policy: wspt,
    use_kv_events: false, ttl: 30s, assume_kv_reuse: false, active_decode_blocks_threshold: 0.9,
    active_prefill_tokens_threshold: 20000, active_prefill_tokens_threshold_frac: 8, session_affinity_ttl: 60s,
    router_track_output_blocks: true}`

// TestRouterFromDynamoRunsAsInline (metamorphic): a scenario reading a
// Dynamo flags file with router.from, its policy left out, loads the same
// section and runs byte for byte as the knobs written inline under policy
// dynamo.
func TestRouterFromDynamoRunsAsInline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kv.flags"), []byte(dynamoFlagsEvery), 0o644); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		strings.Replace(routerFromDoc, "policy: llmd\n  ROUTER", "from: kv.flags", 1),
		strings.Replace(routerFromDoc, "policy: llmd\n  ROUTER", "policy: dynamo\n  dynamo: "+dynamoFlagsInline, 1),
	}
	runs, loaded := [2]*sim.Result{}, [2]*Loaded{}
	for k, doc := range docs {
		l, b, err := parseBuild(t, doc, filepath.Join(dir, "f.yaml"))
		loaded[k] = l
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if runs[k], err = sim.Run(b.Config); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := loaded[0].Router, loaded[1].Router; !reflect.DeepEqual(a.Dynamo, b.Dynamo) || a.Policy != b.Policy {
		t.Errorf("the flags file reads as %s %+v, the inline section as %s %+v", a.Policy, *a.Dynamo, b.Policy, *b.Dynamo)
	}
	if !sameRun(runs[0], runs[1]) {
		t.Errorf("the flags file's run differs from the inline section's")
	}
}

// TestRouterFromDynamoShippedScenario: the shipped flags scenario loads the
// router router-dynamo.yaml writes inline.
func TestRouterFromDynamoShippedScenario(t *testing.T) {
	flags, err := Load("router-dynamo-flags.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inline, err := Load("router-dynamo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(flags.Router.Dynamo, inline.Router.Dynamo) || flags.Router.Policy != "dynamo" {
		t.Fatalf("imported %+v, want %+v", *flags.Router.Dynamo, *inline.Router.Dynamo)
	}
}

// TestRouterFromDynamoBadInput: each error is one line naming the flags
// file, the line and the flag.
func TestRouterFromDynamoBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, flags, router, want string }{
		{"unknown flag", "--router-mode kv\n\n--router-prefill-load-model aic\n", "",
			"kv.flags:3: flag --router-prefill-load-model: not modelled by handoff (its aic model reads AIConfigurator's"},
		{"unlisted flag", "--router-mode kv\n--http-port 8000\n", "",
			"kv.flags:2: flag --http-port: not modelled by handoff; it models: --active-decode-blocks-threshold, --active-prefill-tokens-threshold,"},
		{"session ttl", "--router-session-affinity-ttl-secs 0\n", "",
			"kv.flags:1: flag --router-session-affinity-ttl-secs: must be in [1s, 31536000s], as Dynamo requires, got 0s"},
		{"session ttl not whole", "--router-session-affinity-ttl-secs 1.5\n", "",
			`kv.flags:1: flag --router-session-affinity-ttl-secs: "1.5" is not a whole number of seconds`},
		{"decode share", "--active-decode-blocks-threshold 1.5\n", "",
			"kv.flags:1: flag --active-decode-blocks-threshold: must be in [0, 1], as Dynamo requires, got 1.5"},
		{"missing value", "--router-temperature\n--router-mode kv\n", "", "kv.flags:1: flag --router-temperature: needs a value"},
		{"missing last value", "--router-mode kv \\\n  --router-prefill-load-scale\n", "", "kv.flags:2: flag --router-prefill-load-scale: needs a value"},
		{"bad number", "--router-mode kv\n--router-kv-overlap-score-credit=high\n", "",
			`kv.flags:2: flag --router-kv-overlap-score-credit: "high" is not a number`},
		{"not a number", "--router-temperature NaN\n", "", `kv.flags:1: flag --router-temperature: "NaN" is not a number`},
		{"out of range", "--router-host-cache-hit-weight 2\n", "",
			"kv.flags:1: flag --router-host-cache-hit-weight: must be in [0, 1], as Dynamo requires, got 2"},
		{"queue at 0", "--router-queue-threshold 0\n", "", "kv.flags:1: flag --router-queue-threshold: 0 (queue while any prefill is active) is not modelled"},
		{"other mode", "--router-mode round-robin\n", "", `kv.flags:1: flag --router-mode: router mode "round-robin" is not Dynamo's KV router`},
		{"switch with value", "--no-router-kv-events=true\n", "", "kv.flags:1: flag --no-router-kv-events: takes no value"},
		{"stray word", "--router-mode kv 8000\n", "", "kv.flags:1: flag 8000: expected a flag"},
		{"both", "--router-mode kv\n", "\n  dynamo: {temperature: 0}", "f.yaml:13: field router.dynamo: router.from sets the dynamo section"},
	}
	for _, tc := range tests {
		if err := os.WriteFile(filepath.Join(dir, "kv.flags"), []byte(tc.flags), 0o644); err != nil {
			t.Fatal(err)
		}
		doc := strings.Replace(routerFromDoc, "ROUTER", "from: kv.flags"+tc.router, 1)
		_, err := Parse([]byte(doc), filepath.Join(dir, "f.yaml"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
}
