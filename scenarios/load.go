package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/hardware"
	"handoff/models/strictyaml"
)

// Loaded is a scenario ready to build: decoded, overridden, defaulted and
// validated, with what is needed to report errors and resolve paths.
type Loaded struct {
	Scenario
	File string             // the scenario file as named by the user
	Dir  string             // its folder: relative paths resolve against it
	root *yaml.Node         // the document, for line numbers
	sets map[*yaml.Node]Set // nodes written by --set, for errors
	hw   *hardware.Catalog  // the catalogs' accelerators, once defaults needed them
}

// Load reads, overrides, defaults and validates a scenario file.
func Load(path string, sets ...Set) (*Loaded, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(data, path, sets...)
}

// maxFileBytes bounds a scenario or catalog file; real ones are a few kB.
const maxFileBytes = 16 << 20

// ReadFile reads a scenario or catalog file whole, refusing one larger
// than 16 MiB: a device or a huge file named by mistake (/dev/zero) fails
// at once instead of exhausting memory. Errors name the path.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case len(data) > maxFileBytes:
		return nil, fmt.Errorf("%s: larger than %d MiB: not a scenario or catalog file", path, maxFileBytes>>20)
	}
	return data, nil
}

// Parse is Load on bytes already read; file names them in errors.
func Parse(data []byte, file string, sets ...Set) (*Loaded, error) {
	l := &Loaded{File: file, Dir: filepath.Dir(file)}
	root, err := strictyaml.Decode(data, file, &l.Scenario)
	if err != nil {
		return nil, err
	}
	l.root = root
	if len(sets) > 0 {
		if err := l.override(sets); err != nil {
			return nil, err
		}
	}
	if err := l.routerFrom(); err != nil {
		return nil, err
	}
	l.applyDefaults()
	if err := l.validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// override applies --set values to the document and decodes it again,
// strictly, so an override is held to the same rules as the file.
func (l *Loaded) override(sets []Set) error {
	l.sets = map[*yaml.Node]Set{}
	for _, s := range sets {
		n, err := s.apply(l.root)
		if err != nil {
			return err
		}
		l.sets[n] = s
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(l.root); err != nil {
		return fmt.Errorf("%s: re-encoding after --set: %w", l.File, err)
	}
	l.Scenario = Scenario{}
	_, err := strictyaml.Decode(buf.Bytes(), l.File, &l.Scenario)
	var fe *strictyaml.FieldError
	if errors.As(err, &fe) {
		fe.Line = 0 // lines of the re-encoded document mean nothing to the user
		if !l.fromSet(fe) {
			fe.Msg += " (after --set)"
		}
	}
	return err
}

// errorf reports a validation error at a dotted path of the scenario.
func (l *Loaded) errorf(path, format string, args ...any) error {
	err := strictyaml.Errorf(l.root, l.File, path, format, args...)
	l.fromSet(err.(*strictyaml.FieldError))
	return err
}

// locate places an error from a nested Validate/Resolve at prefix. A plain
// error reading "field: msg" (the workload package's form, several may be
// joined) is placed at prefix.field; only the first is kept, so the user
// sees one error.
func (l *Loaded) locate(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *strictyaml.FieldError
	if !errors.As(err, &fe) {
		err = fieldOf(err)
	}
	err = strictyaml.Locate(l.root, l.File, prefix, err)
	if errors.As(err, &fe) && fe.File == l.File {
		l.fromSet(fe)
	}
	return err
}

// fromSet reports whether fe's field (or a field above it) was written by
// --set and if so says so in fe, dropping the line, which would point at
// the value the override replaced.
func (l *Loaded) fromSet(fe *strictyaml.FieldError) bool {
	if len(l.sets) == 0 {
		return false
	}
	for i := len(fe.Field); i > 0; i-- {
		if i < len(fe.Field) && fe.Field[i] != '.' && fe.Field[i] != '[' {
			continue
		}
		if s, ok := l.sets[strictyaml.Find(l.root, fe.Field[:i])]; ok {
			fe.Line = 0
			fe.Msg += " (from --set " + s.String() + ")"
			return true
		}
	}
	return false
}

// Resolve returns a path named in the scenario, relative to its folder.
func (l *Loaded) Resolve(p string) string { return resolveFrom(l.Dir, p) }

// Effective renders the scenario with every default filled, as YAML, to be
// saved in the folder dir: relative paths (trace, step-time and catalog
// files) are rewritten to resolve from dir, so that the saved file loads
// back to the same scenario. dir "" keeps paths as written.
func (l *Loaded) Effective(dir string) ([]byte, error) {
	s := l.Scenario
	if dir != "" {
		s = l.relocated(dir)
	}
	var doc yaml.Node
	if err := doc.Encode(&s); err != nil {
		return nil, err
	}
	dropEmptyLists(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dropEmptyLists removes mapping entries whose value is an empty list. A
// nil list renders as [], which would load back as a list that is set but
// empty: an error where the field does not apply (the values of a lognormal
// length distribution).
func dropEmptyLists(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Kind != yaml.SequenceNode || len(v.Content) > 0 {
				kept = append(kept, n.Content[i], v)
			}
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		dropEmptyLists(c)
	}
}

// relocated returns a copy of the scenario whose relative paths resolve
// from dir; the loaded scenario is not changed.
func (l *Loaded) relocated(dir string) Scenario {
	s := l.Scenario
	move := func(p string) string { return l.relativeTo(dir, p) }
	if s.Workload.Trace != nil {
		t := *s.Workload.Trace
		t.Path = move(t.Path)
		s.Workload.Trace = &t
	}
	if s.Workload.ServeGen != nil {
		g := *s.Workload.ServeGen
		g.Path, g.Paths = move(g.Path), slices.Clone(g.Paths)
		for i := range g.Paths {
			g.Paths[i] = move(g.Paths[i])
		}
		s.Workload.ServeGen = &g
	}
	s.Pools = slices.Clone(s.Pools)
	for i := range s.Pools {
		if f := s.Pools[i].StepTime.File; f != "" {
			s.Pools[i].StepTime.File = move(f)
		}
	}
	s.Catalog.Files = slices.Clone(s.Catalog.Files)
	for i, f := range s.Catalog.Files {
		s.Catalog.Files[i] = move(f)
	}
	if IsConfigPath(s.Model) {
		s.Model = move(s.Model)
	}
	s.Catalog.Models = slices.Clone(s.Catalog.Models)
	for i := range s.Catalog.Models {
		s.Catalog.Models[i].Config = move(s.Catalog.Models[i].Config)
	}
	return s
}

// relativeTo rewrites a path named in the scenario to resolve from dir:
// relative when possible, else absolute.
func (l *Loaded) relativeTo(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	target, err := filepath.Abs(l.Resolve(p))
	if err != nil {
		return p
	}
	from, err := filepath.Abs(dir)
	if err != nil {
		return target
	}
	rel, err := filepath.Rel(from, target)
	if err != nil {
		return target
	}
	return rel
}

// fieldOf turns the first of possibly (nested) joined errors, when it reads
// "field: msg", into a position-less FieldError for that field; other
// errors are returned as they are.
func fieldOf(err error) error {
	for {
		j, ok := err.(interface{ Unwrap() []error })
		if !ok || len(j.Unwrap()) == 0 {
			break
		}
		err = j.Unwrap()[0]
	}
	field, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok || field == "" || strings.ContainsAny(field, " \t\n\"'`:") {
		return err
	}
	return strictyaml.Fieldf(field, "%s", msg)
}
