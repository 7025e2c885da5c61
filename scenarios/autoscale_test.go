package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scaledDecode is fleetDoc with the decode pool's autoscaler replaced.
func scaledDecode(t *testing.T, autoscale string) string {
	t.Helper()
	old := `autoscale: {policy: schedule, min: 1, max: 3, interval: 100ms, provisioning: 50ms, load_bandwidth: 160GB/s,
                schedule: [{at: 200ms, count: 3}]}`
	doc := fleetDoc(t)
	if !strings.Contains(doc, old) {
		t.Fatal("fleetDoc has no schedule autoscaler")
	}
	return strings.Replace(doc, old, autoscale, 1)
}

// The hpa and sla sections are filled with their defaults in the
// effective scenario, which loads back to the same cluster; the sla
// section may be left out.
func TestAutoscaleSectionsDefaulted(t *testing.T) {
	for _, tt := range []struct{ autoscale, want string }{
		{"autoscale: {policy: hpa, min: 1, max: 3, hpa: {metric: running, target: 16}}", "tolerance: 0.1"},
		{"autoscale: {policy: sla, min: 1, max: 3}", "predictor: constant"},
		{"autoscale: {policy: sla, min: 1, max: 3, sla: {predictor: kalman}}", "min_points: 5"},
	} {
		l, b, err := parseBuild(t, scaledDecode(t, tt.autoscale), "t.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tt.autoscale, err)
		}
		if p := b.Config.Scaling[0].Policy; p == nil {
			t.Errorf("%s: no policy built", tt.autoscale)
		}
		eff, err := l.Effective("")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(eff), tt.want) {
			t.Errorf("%s: the effective scenario has no %q:\n%s", tt.autoscale, tt.want, eff)
		}
		path := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(path, []byte(scaledDecode(t, tt.autoscale)), 0o644); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, path, nil)
	}
}

func TestAutoscaleSectionErrors(t *testing.T) {
	for _, tt := range []struct{ autoscale, want string }{
		{"autoscale: {policy: hpa, min: 1, max: 3, hpa: {metric: running, target: 0}}",
			"t.yaml:19: field pools[1].autoscale.hpa.target: must be > 0"},
		{"autoscale: {policy: hpa, min: 1, max: 3, hpa: {metric: queue, target: 4}}",
			"field pools[1].autoscale.hpa.metric: \"queue\" is not one of waiting, running, kv_usage"},
		{"autoscale: {policy: hpa, min: 1, max: 3, hpa: {metric: running, target: 4, scale_down: {policies: [{type: pods, value: 1, period: 0s}]}}}",
			"field pools[1].autoscale.hpa.scale_down.policies[0].period: must be in (0, 30min]"},
		{"autoscale: {policy: hpa, min: 1, max: 3}", "field pools[1].autoscale.hpa: required with policy hpa"},
		{"autoscale: {policy: sla, min: 1, max: 3, hpa: {metric: running, target: 4}}",
			"field pools[1].autoscale.hpa: only policy hpa reads a hpa section (the policy is sla)"},
		{"autoscale: {policy: hpa, min: 1, max: 3, hpa: {metric: running, target: 4}, sla: {}}",
			"field pools[1].autoscale.sla: only policy sla reads a sla section"},
		{"autoscale: {policy: fixed, min: 1, max: 3, schedule: [{at: 1s, count: 2}]}",
			"field pools[1].autoscale.schedule: only policy schedule reads a schedule section"},
		{"autoscale: {policy: sla, min: 1, max: 3, sla: {predictor: arima}}",
			"field pools[1].autoscale.sla.predictor: \"arima\" is not one of constant, kalman"},
		{"autoscale: {policy: sla, min: 1, max: 3, sla: {kalman: {r: -1}}}",
			"field pools[1].autoscale.sla.kalman.r: must be > 0"},
	} {
		_, _, err := parseBuild(t, scaledDecode(t, tt.autoscale), "t.yaml")
		if err == nil {
			t.Errorf("%s: no error", tt.autoscale)
			continue
		}
		checkError(t, err, tt.want)
	}
}
