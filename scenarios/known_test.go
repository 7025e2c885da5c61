package scenarios

import (
	"strings"
	"testing"
)

// TestKnownValuesListed: an unknown name lists the known ones as a comma
// list, as every message of handoff writes lists, never as a Go slice.
func TestKnownValuesListed(t *testing.T) {
	tests := []struct {
		doc  string
		want string
	}{
		{edit(t, "role: decode", "role: decoder"), `unknown role "decoder" (known: colocated, prefill, decode)`},
		{edit(t, "role: decode", "role: decode\n    preemption: evict"), `unknown policy "evict" (known: recompute, swap, reject)`},
		{edit(t, "role: decode", "role: decode\n    engine: {remote_kv_queue: fifo}"), `unknown order "fifo" (known: separate, shared)`},
		{base + "router: {policy: nope}\n", `unknown policy "nope" (known: round_robin, least_loaded, `},
		{edit(t, "role: decode", "role: decode\n    step_time: {model: nope}"), `unknown model "nope" (known: roofline, polynomial, `},
		{strings.Replace(fleetDoc(t), "policy: schedule", "policy: nope", 1), `unknown policy "nope" (known: fixed, hpa, schedule, sla)`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.doc), "t.yaml")
		if err == nil {
			t.Errorf("no error, want %q", tt.want)
			continue
		}
		checkError(t, err, tt.want)
		if strings.Contains(err.Error(), "(known: [") {
			t.Errorf("error %q lists values as a Go slice", err)
		}
	}
}
