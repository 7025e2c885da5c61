package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"handoff/hardware/spec"
)

// Loaded is a scenario ready to build: decoded, overridden, defaulted and
// validated, with what is needed to report errors and resolve paths.
type Loaded struct {
	Scenario
	File string     // the scenario file as named by the user
	Dir  string     // its folder: relative paths resolve against it
	root *yaml.Node // the document, for line numbers
}

// Load reads, overrides, defaults and validates a scenario file.
func Load(path string, sets ...Set) (*Loaded, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(data, path, sets...)
}

// Parse is Load on bytes already read; file names them in errors.
func Parse(data []byte, file string, sets ...Set) (*Loaded, error) {
	l := &Loaded{File: file, Dir: filepath.Dir(file)}
	root, err := spec.Decode(data, file, &l.Scenario)
	if err != nil {
		return nil, err
	}
	l.root = root
	if len(sets) > 0 {
		if err := l.override(sets); err != nil {
			return nil, err
		}
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
	for _, s := range sets {
		if err := s.apply(l.root); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(l.root); err != nil {
		return fmt.Errorf("%s: re-encoding after --set: %w", l.File, err)
	}
	l.Scenario = Scenario{}
	_, err := spec.Decode(buf.Bytes(), l.File, &l.Scenario)
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		fe.Line = 0 // lines of the re-encoded document mean nothing to the user
		fe.Msg += " (after --set)"
	}
	return err
}

// errorf reports a validation error at a dotted path of the scenario.
func (l *Loaded) errorf(path, format string, args ...any) error {
	return spec.Errorf(l.root, l.File, path, format, args...)
}

// locate places an error from a nested Validate/Resolve at prefix.
func (l *Loaded) locate(prefix string, err error) error {
	return spec.Locate(l.root, l.File, prefix, err)
}

// Resolve returns a path named in the scenario, relative to its folder.
func (l *Loaded) Resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.Dir, p)
}

// Effective renders the scenario with every default filled, as YAML.
func (l *Loaded) Effective() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&l.Scenario); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
