package scenarios

import (
	"strings"
	"testing"
)

// TestLockupAndQueueSettingsValidated: the waiting-queue order names one
// of vLLM's, the lock-up bound is a duration, and both reach the engine
// and the core.
func TestLockupAndQueueSettingsValidated(t *testing.T) {
	for doc, want := range map[string]string{
		minimal + "    engine: {remote_kv_queue: fifo}\n": "m.yaml:13: field pools[0].engine.remote_kv_queue: unknown order",
		minimal + "metrics: {lockup_abort: -1s}\n":        "field metrics.lockup_abort: bad duration",
	} {
		if _, err := Parse([]byte(doc), "m.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	l, err := Parse([]byte(minimal+"    engine: {remote_kv_queue: shared}\nmetrics: {lockup_abort: 5s}\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !b.Config.Instances[0].Engine.SharedQueue || b.Config.LockupAbortNs != 5e9 {
		t.Errorf("shared queue %v, lock-up bound %d ns", b.Config.Instances[0].Engine.SharedQueue, b.Config.LockupAbortNs)
	}
}
