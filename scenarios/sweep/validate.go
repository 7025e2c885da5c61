package sweep

import (
	"fmt"
	"strings"
	"unicode"

	"handoff/models/strictyaml"
)

// MaxPoints bounds the points one sweep expands to.
const MaxPoints = 1_000_000

// Validate checks the sweep block's shape: replicas ≥ 0, something to vary,
// well-formed paths each varied once (no path inside another; paths
// resolved by WithVary are compared by the field they name), non-empty
// value lists, zip lists of one length, and at most MaxPoints points. It
// does not know the scenario schema: whether a path names a scenario field
// is checked when the overrides are applied. Errors from the file are
// *strictyaml.FieldError naming the field ("sweep.grid.pools.decode.count") and
// its line, with File left for the caller to fill; errors from --vary name
// the flag. Cost: O(axes² + values).
func (s *Spec) Validate() error {
	if s.Replicas < 0 {
		return &strictyaml.FieldError{Field: "sweep.replicas", Msg: fmt.Sprintf("must be at least 0, got %d", s.Replicas)}
	}
	if len(s.Grid)+len(s.Zip) == 0 && s.Replicas <= 1 {
		return &strictyaml.FieldError{Field: "sweep", Msg: "nothing to vary: give grid, zip or replicas > 1"}
	}
	var seen []sited
	for _, sec := range []struct {
		name string
		axes Axes
	}{{"grid", s.Grid}, {"zip", s.Zip}} {
		for _, ax := range sec.axes {
			a := sited{ax, sec.name}
			if err := s.checkAxis(a, seen); err != nil {
				return err
			}
			seen = append(seen, a)
		}
	}
	if err := s.checkZip(); err != nil {
		return err
	}
	if _, ok := s.count(); !ok {
		return &strictyaml.FieldError{Field: "sweep", Msg: fmt.Sprintf("expands to more than %d points", MaxPoints)}
	}
	return nil
}

// sited is an axis with the section ("grid" or "zip") it sits in.
type sited struct {
	Axis
	section string
}

// field names the axis in errors: its path in the file, or its flag.
func (a sited) field() string {
	if a.vary {
		return "--vary " + a.Path
	}
	return "sweep." + a.section + "." + a.Path
}

// errorf reports a problem with the axis.
func (a sited) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if a.vary {
		return fmt.Errorf("%s: %s", a.field(), msg)
	}
	return &strictyaml.FieldError{Line: a.Line, Field: a.field(), Msg: msg}
}

// checkAxis checks one axis against the ones before it.
func (s *Spec) checkAxis(a sited, seen []sited) error {
	if err := checkPath(a.Path); err != nil {
		return a.errorf("%v", err)
	}
	if len(a.Values) == 0 {
		return a.errorf("empty value list")
	}
	if a.Path == "seed" && s.Replicas > 1 {
		return a.errorf("seed is also varied by sweep.replicas; use one or the other")
	}
	for _, b := range seen {
		switch {
		case a.key() == b.key():
			return a.errorf("also varied at %s%s", b.field(), sameField(a, b))
		case within(a.key(), b.key()), within(b.key(), a.key()):
			return a.errorf("overlaps %s%s: one would overwrite the other", b.field(), sameField(a, b))
		}
	}
	return nil
}

// sameField says which fields two differently spelt axes name, for errors:
// " (both name pools[0].count)", " (pools[0] and pools[0].count)"; "" when
// the paths are spelt alike.
func sameField(a, b sited) string {
	switch {
	case a.Path == b.Path || a.named == "" || b.named == "":
		return ""
	case a.named == b.named:
		return " (both name " + a.named + ")"
	}
	return " (" + b.named + " and " + a.named + ")"
}

// checkPath rejects malformed paths and paths into the sweep block.
func checkPath(p string) error {
	blank := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
	switch {
	case p == "" || strings.IndexFunc(p, blank) >= 0:
		return fmt.Errorf("path %q: want a dotted scenario path such as pools.decode.count", p)
	case strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, ".."):
		return fmt.Errorf("path %q has an empty part", p)
	case p == "sweep" || strings.HasPrefix(p, "sweep."):
		return fmt.Errorf("a sweep cannot vary its own block")
	}
	return nil
}

// within reports whether path p lies inside path q: "a.b.c" inside "a.b",
// "pools[0].count" inside "pools[0]" and "pools".
func within(p, q string) bool {
	return strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[")
}

// checkZip requires every zip list to be as long as the first.
func (s *Spec) checkZip() error {
	if len(s.Zip) == 0 {
		return nil
	}
	first := sited{s.Zip[0], "zip"}
	for _, ax := range s.Zip[1:] {
		if len(ax.Values) != len(first.Values) {
			return sited{ax, "zip"}.errorf("%d values, but %s has %d (zip pairs values by position)",
				len(ax.Values), first.field(), len(first.Values))
		}
	}
	return nil
}

// count returns the number of points, and false if it exceeds MaxPoints.
func (s *Spec) count() (int, bool) {
	n := 1
	for _, d := range s.dims() {
		if d > MaxPoints/max(n, 1) {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// dims returns the length of each dimension, slowest first: the grid axes,
// the zip (one dimension), the replicas.
func (s *Spec) dims() []int {
	d := make([]int, 0, len(s.Grid)+2)
	for _, ax := range s.Grid {
		d = append(d, len(ax.Values))
	}
	if len(s.Zip) > 0 {
		d = append(d, len(s.Zip[0].Values))
	}
	if s.Replicas > 1 {
		d = append(d, s.Replicas)
	}
	return d
}

// CheckPaths calls check once per axis with the axis's path and first
// value, in order, and returns the first failure placed at the axis, as
// Validate's errors are. The caller's check applies the path to the
// scenario schema, which this package does not know.
func (s *Spec) CheckPaths(check func(path, value string) error) error {
	for _, sec := range []struct {
		name string
		axes Axes
	}{{"grid", s.Grid}, {"zip", s.Zip}} {
		for _, ax := range sec.axes {
			if len(ax.Values) == 0 {
				continue // Validate reports it
			}
			if err := check(ax.Path, ax.Values[0]); err != nil {
				return sited{ax, sec.name}.errorf("%v", err)
			}
		}
	}
	return nil
}
