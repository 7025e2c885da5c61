package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/sim"
)

// prefillLine and decodeLine are where base's pools start: a field added
// after "role: prefill" sits on line 13, after "role: decode" on line 17.
const prefillLine, decodeLine = "role: prefill", "role: decode"

// TestHandoffBadInput: each bad handoff setting is one error naming the
// field and its line.
func TestHandoffBadInput(t *testing.T) {
	after := func(line, field string) string { return edit(t, line, line+"\n    "+field) }
	tests := []struct {
		name, doc, want string
	}{
		{"unknown hold mode", after(prefillLine, "kv_hold: {mode: forever}"),
			`t.yaml:13: field pools[0].kv_hold.mode: unknown mode "forever" (known: timeout, lease)`},
		{"negative timeout", after(prefillLine, "kv_hold: {mode: timeout, timeout: -1s}"),
			`t.yaml:13: field pools[0].kv_hold.timeout: bad duration "-1s"`},
		{"lease under a timeout", after(prefillLine, "kv_hold: {mode: timeout, lease: 30s}"),
			"t.yaml:13: field pools[0].kv_hold.lease: goes with mode: lease, not timeout"},
		{"timeout under a lease", after(prefillLine, "kv_hold: {mode: lease, timeout: 30s}"),
			"t.yaml:13: field pools[0].kv_hold.timeout: goes with mode: timeout, not lease"},
		{"fractional lease", after(prefillLine, "kv_hold: {mode: lease, lease: 1500ms}"),
			"t.yaml:13: field pools[0].kv_hold.lease: must be a whole number of seconds from 1s to 1 year (vLLM's kv_lease_duration), got 1.5s"},
		{"both spellings", after(prefillLine, "kv_hold: {mode: timeout}\n    kv_hold_timeout: 8m"),
			"t.yaml:14: field pools[0].kv_hold_timeout: the older spelling of kv_hold: {mode: timeout, timeout: …}: give kv_hold alone"},
		{"hold on a decode pool", after(decodeLine, "kv_hold: {mode: lease}"),
			"t.yaml:17: field pools[1].kv_hold: applies to prefill pools, not decode"},
		{"old hold on a decode pool", after(decodeLine, "kv_hold_timeout: 8m"),
			"t.yaml:17: field pools[1].kv_hold_timeout: applies to prefill pools, not decode"},
		{"notify on a decode pool", after(decodeLine, "notify_rejected: false"),
			"t.yaml:17: field pools[1].notify_rejected: applies to prefill pools, not decode"},
		{"failure policy on a prefill pool", after(prefillLine, "kv_load_failure_policy: fail"),
			"t.yaml:13: field pools[0].kv_load_failure_policy: applies to decode pools, not prefill"},
		{"unknown failure policy", after(decodeLine, "kv_load_failure_policy: retry"),
			`t.yaml:17: field pools[1].kv_load_failure_policy: unknown policy "retry" (known: recompute, fail)`},
		{"decode first on a prefill pool", after(prefillLine, "decode_first: {cache_hit_threshold: 0.5}"),
			"t.yaml:13: field pools[0].decode_first: applies to decode pools, not prefill"},
		{"decode first without its threshold", after(decodeLine, "decode_first: {}"),
			"t.yaml:17: field pools[1].decode_first: needs cache_hit_threshold"},
		{"decode first threshold out of range", after(decodeLine, "decode_first: {cache_hit_threshold: 1.5}"),
			"t.yaml:17: field pools[1].decode_first.cache_hit_threshold: must be in [0, 1], got 1.5"},
		{"decode first under dynamo", after(decodeLine, "decode_first: {cache_hit_threshold: 0.5}") +
			"router: {policy: dynamo}\n",
			"t.yaml:17: field pools[1].decode_first: llm-d's decode-first flow sends a request to its decoder before any " +
				"prefill: the router must pick the decoder when the request arrives (round_robin, least_loaded, llmd, " +
				"topology_aware, sglang), not dynamo, which picks it after the prefill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refuses(t, tt.doc, tt.want) })
	}
}

// TestHandoffBuild: each setting reaches the core as vLLM means it — the
// release's defaults (latest: a lease; 0.10: a 120 s timeout and no
// notice of refusals; 0.16: 480 s and recompute on failed loads), a
// lease of 30 s heartbeats every 5 s and extends 20 s (vLLM's integer
// seconds: 10 s gives 1 s and 6 s), the older kv_hold_timeout is the
// timeout mode's value, an explicit timeout of 0 (forever) stays 0.
func TestHandoffBuild(t *testing.T) {
	tests := []struct {
		name, prefill, decode string
		hold                  sim.KVHold
		strand, recompute     bool
		decodeFirst           float64
	}{
		{"defaults", "", "", sim.KVHold{Lease: true, LeaseNs: 30e9, HeartbeatNs: 5e9, ExtendNs: 20e9}, false, false, -1},
		{"vLLM 0.10", "vllm: \"0.10\"", "", sim.KVHold{TimeoutNs: 120e9}, true, false, -1},
		{"vLLM 0.16", "vllm: \"0.16\"", "engine: {vllm: \"0.16\"}", sim.KVHold{TimeoutNs: 480e9}, true, true, -1},
		{"timeout apart from latest", "kv_hold: {mode: timeout}", "", sim.KVHold{TimeoutNs: 480e9}, false, false, -1},
		{"lease", "kv_hold: {mode: lease}", "", sim.KVHold{Lease: true, LeaseNs: 30e9, HeartbeatNs: 5e9, ExtendNs: 20e9},
			false, false, -1},
		{"short lease", "kv_hold: {mode: lease, lease: 10s}", "",
			sim.KVHold{Lease: true, LeaseNs: 10e9, HeartbeatNs: 1e9, ExtendNs: 6e9}, false, false, -1},
		{"older spelling", "kv_hold_timeout: 2m", "", sim.KVHold{TimeoutNs: 120e9}, false, false, -1},
		{"forever", "kv_hold: {mode: timeout, timeout: 0s}", "", sim.KVHold{}, false, false, -1},
		{"not told", "notify_rejected: false", "kv_load_failure_policy: recompute", sim.KVHold{Lease: true, LeaseNs: 30e9, HeartbeatNs: 5e9, ExtendNs: 20e9},
			true, true, -1},
		{"decode first", "", "decode_first: {cache_hit_threshold: 0.25}", sim.KVHold{Lease: true, LeaseNs: 30e9, HeartbeatNs: 5e9, ExtendNs: 20e9}, false, false, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := base
			switch {
			case strings.HasPrefix(tt.prefill, "vllm:"): // the prefill pool has an engine line
				doc = edit(t, "engine: {block_size: 16}", "engine: {block_size: 16, "+tt.prefill+"}")
			case tt.prefill != "":
				doc = edit(t, prefillLine, prefillLine+"\n    "+tt.prefill)
			}
			if tt.decode != "" {
				doc = editDoc(t, doc, decodeLine, decodeLine+"\n    "+tt.decode)
			}
			l, b, err := parseBuild(t, doc, "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p, d := b.Config.Instances[0], b.Config.Instances[1]
			if p.KVHold != tt.hold || p.StrandRejected != tt.strand || d.RecomputeLoadFailures != tt.recompute ||
				d.DecodeFirst != (tt.decodeFirst >= 0) || tt.decodeFirst >= 0 && d.DecodeFirstThreshold != tt.decodeFirst {
				t.Errorf("prefill %+v (strand %v), decode recompute %v, decode first %v at %g", p.KVHold, p.StrandRejected,
					d.RecomputeLoadFailures, d.DecodeFirst, d.DecodeFirstThreshold)
			}
			file := filepath.Join(t.TempDir(), "t.yaml")
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			roundTrip(t, file, nil)
			if l.Pools[0].KVHoldTimeout != nil {
				t.Error("the older spelling is kept: the effective scenario would give both")
			}
		})
	}
}

// editDoc is edit on another document.
func editDoc(t *testing.T, doc, old, new string) string {
	t.Helper()
	if !strings.Contains(doc, old) {
		t.Fatalf("document has no %q", old)
	}
	return strings.Replace(doc, old, new, 1)
}
