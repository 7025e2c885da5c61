package scenarios

import (
	"fmt"
	"math"
	"strings"

	"handoff/results"
	"handoff/scenarios/workload"
	"handoff/sim"
)

// Class is a traffic class of the workload (workload.classes): the share
// of the requests it takes, the priority its requests carry to engines
// under the priority scheduling policy (lower served first, as vLLM's
// --scheduling-policy priority), and its own SLO, which the summary, the
// report and `goodput` judge its requests against. A session's turns all
// take one class.
type Class struct {
	Name     string  `yaml:"name"`
	Share    float64 `yaml:"share"` // left out when the trace's class column gives each request's class
	Priority int     `yaml:"priority"`
	SLO      *SLO    `yaml:"slo"` // required; attainment defaults to the scenario's slo.attainment
}

// Limits on classes: a class index is a byte in every record, and a
// priority an engine's int32.
const (
	maxClasses  = 16
	maxPriority = 1 << 20
)

// classDefaults fills each class's attainment target from the scenario's
// and tells a trace the classes' names, which its class column holds.
func (l *Loaded) classDefaults() {
	var names []string
	for i := range l.Workload.Classes {
		c := &l.Workload.Classes[i]
		if c.SLO != nil {
			fill(l, fmt.Sprintf("workload.classes[%d].slo.attainment", i), &c.SLO.Attainment, l.SLO.Attainment)
		}
		names = append(names, c.Name)
	}
	if t := l.Workload.Trace; t != nil {
		t.ClassNames = names
	}
}

// tracedClasses reports whether the trace names each request's class
// (columns.class), rather than the classes' shares drawing it.
func (l *Loaded) tracedClasses() bool {
	t := l.Workload.Trace
	return t != nil && t.Columns != nil && t.Columns.Class != ""
}

// validateClasses checks the classes: named once each, a share each
// (summing to 1), a priority in range and an SLO of their own.
func (l *Loaded) validateClasses() error {
	cs := l.Workload.Classes
	if len(cs) > maxClasses {
		return l.errorf("workload.classes", "at most %d classes, got %d", maxClasses, len(cs))
	}
	sum := 0.0
	for i, c := range cs {
		if err := l.validateClass(i, c); err != nil {
			return err
		}
		sum += c.Share
	}
	if len(cs) > 0 && !l.tracedClasses() && math.Abs(sum-1) > 1e-9 {
		return l.errorf("workload.classes", "the classes' shares sum to %.6g, want 1", sum)
	}
	return nil
}

func (l *Loaded) validateClass(i int, c Class) error {
	at := fmt.Sprintf("workload.classes[%d]", i)
	switch {
	case c.Name == "" || strings.ContainsAny(c.Name, " ,\t\n"):
		return l.errorf(at+".name", "required: a name without spaces or commas, e.g. interactive")
	case l.classIndex(c.Name) != i:
		return l.errorf(at+".name", "%q names an earlier class too", c.Name)
	case l.tracedClasses() && c.Share != 0:
		return l.errorf(at+".share", "must be left out: the trace's class column (workload.trace.columns.class) gives each request's class")
	case !l.tracedClasses() && !inUnit(c.Share):
		return l.errorf(at+".share", "must be in (0, 1], got %g", c.Share)
	case c.Priority < -maxPriority || c.Priority > maxPriority:
		return l.errorf(at+".priority", "must be in [%d, %d], got %d", -maxPriority, maxPriority, c.Priority)
	case c.SLO == nil:
		return l.errorf(at+".slo", "required: each class has its own SLO, e.g. {ttft: 500ms, tpot: 50ms}")
	case c.SLO.TTFT <= 0 || c.SLO.TPOT <= 0:
		return l.errorf(at+".slo", "ttft and tpot are required and must be positive (e.g. {ttft: 500ms, tpot: 50ms})")
	case !inUnit(c.SLO.Attainment):
		return l.errorf(at+".slo.attainment", "must be in (0, 1], got %g", c.SLO.Attainment)
	}
	return nil
}

// classIndex is the index of the first class named name, or -1.
func (l *Loaded) classIndex(name string) int {
	for i, c := range l.Workload.Classes {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// buildClasses tags the source's requests with their classes, drawn from
// the "classes" stream unless the trace names them, and gives the
// simulator their priorities and the summary their SLOs. Without classes
// it returns src.
func (l *Loaded) buildClasses(b *Built, src sim.Source, streams sim.Streams) sim.Source {
	cs := l.Workload.Classes
	if len(cs) == 0 {
		return src
	}
	shares := make([]float64, len(cs))
	b.Config.Priorities, b.Config.ClassNames = make([]int32, len(cs)), make([]string, len(cs))
	b.Classes = make([]results.Class, len(cs))
	for i, c := range cs {
		shares[i] = c.Share
		b.Config.Priorities[i], b.Config.ClassNames[i] = int32(c.Priority), c.Name
		b.Classes[i] = results.Class{Name: c.Name,
			SLO: results.SLO{TTFTNs: int64(c.SLO.TTFT), TPOTNs: int64(c.SLO.TPOT), Attainment: c.SLO.Attainment}}
	}
	if l.tracedClasses() {
		return src
	}
	return workload.Classify(src, shares, streams.Stream("classes"))
}
