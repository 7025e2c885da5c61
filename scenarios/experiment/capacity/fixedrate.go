package capacity

import (
	"fmt"
	"strings"

	"handoff/models/units"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
)

// checkScalable refuses, for command (goodput or plan), a workload whose
// arrival rate workload.rate_scale cannot set: both searches run the
// scenario at rates of their choosing by scaling it. A closed loop's rate,
// or a session workload's, is what the fleet makes of its users; rather
// than search another knob in its place (the users, the session starts),
// whose answer would not be a rate the fleet serves, the error names the
// sweep that shows how the fleet fares as the load turns (goodput), or as
// the fleet grows at the workload's own load (plan).
func checkScalable(l *scenarios.Loaded, command string) error {
	field, why := l.RateFixedBy()
	if field == "" {
		return nil
	}
	lead := "goodput searches the arrival rate by scaling it (workload.rate_scale)"
	vary := loadAxis(l, field)
	if command == "plan" || vary == "" {
		vary = "pools." + l.Pools[len(l.Pools)-1].Name + ".count=1,2,4,8"
	}
	if command == "plan" {
		lead = "plan runs each fleet at --target-rate by scaling the arrival rate (workload.rate_scale)"
	}
	return l.FieldError(field, strings.Join([]string{lead + ", which this workload does not take: " + why,
		"to see how the fleet fares instead, sweep: handoff sweep " + experiment.ShellQuote(l.File) + " -o DIR --vary " + vary}, "; "))
}

// loadAxis is the --vary that turns the load of a workload whose rate is
// fixed by field: its users, or its sessions' start rate, from half to
// four times the scenario's; "" when there is none (a trace's times).
func loadAxis(l *scenarios.Loaded, field string) string {
	w := &l.Workload
	switch field {
	case "workload.client.concurrency":
		c := w.Client.Concurrency
		return fmt.Sprintf("workload.client.concurrency=%d,%d,%d,%d", max(c/2, 1), c, 2*c, 4*c)
	case "workload.sessions":
		r := float64(w.Sessions.Arrival.Rate)
		return fmt.Sprintf("workload.sessions.arrival.rate=%s,%s,%s,%s", units.Rate(r/2), units.Rate(r), units.Rate(2*r), units.Rate(4*r))
	}
	return ""
}
