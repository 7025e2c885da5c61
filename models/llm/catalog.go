package llm

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/models/strictyaml"
)

//go:embed catalog.yaml
var embeddedCatalog []byte

// Catalog is a set of models keyed by lower-case name. Lookups return copies,
// so callers cannot change the catalog; listings are sorted by name.
type Catalog struct {
	models map[string]*Model
}

// File is the YAML layout of a model catalog file.
type File struct {
	Models []Spec `yaml:"models"`
}

// Default returns the embedded catalog (catalog.yaml), parsed afresh on each
// call. It panics only if the embedded file is broken, which a test guards
// against.
func Default() *Catalog {
	c, err := Parse(embeddedCatalog, "models/llm/catalog.yaml")
	if err != nil {
		panic("llm: embedded catalog: " + err.Error())
	}
	return c
}

// Parse strictly decodes and validates a model catalog file. Every entry
// needs a source; names must be unique. Errors are *strictyaml.FieldError naming
// file, line and field.
func Parse(data []byte, file string) (*Catalog, error) {
	var f File
	root, err := strictyaml.Decode(data, file, &f)
	if err != nil {
		return nil, err
	}
	c := &Catalog{models: map[string]*Model{}}
	for i, s := range f.Models {
		m, err := s.Resolve()
		switch {
		case err != nil:
		case strings.TrimSpace(s.Source) == "":
			err = strictyaml.Fieldf("source", "required: say where the figures come from")
		case c.models[m.Name] != nil:
			err = strictyaml.Fieldf("name", "duplicate model %q", m.Name)
		}
		if err != nil {
			return nil, strictyaml.Locate(root, file, fmt.Sprintf("models[%d]", i), err)
		}
		c.models[m.Name] = m
	}
	return c, nil
}

// Merge returns a new catalog holding c's models overridden and extended by
// o's. A nil c or o counts as empty. Neither input changes.
func (c *Catalog) Merge(o *Catalog) *Catalog {
	out := &Catalog{models: map[string]*Model{}}
	for _, src := range []*Catalog{c, o} {
		if src == nil {
			continue
		}
		for k, m := range src.models {
			out.models[k] = m // models are never mutated in place
		}
	}
	return out
}

// AddModel adds or replaces a copy of m (a scenario's inline model) under its
// lower-cased name. Validate m with Spec.Resolve first; it panics on an empty
// name.
func (c *Catalog) AddModel(m *Model) {
	cp := *m
	cp.Name = strings.ToLower(strings.TrimSpace(cp.Name))
	if cp.Name == "" {
		panic("llm: AddModel with empty name")
	}
	if c.models == nil {
		c.models = map[string]*Model{}
	}
	c.models[cp.Name] = &cp
}

// Model returns a copy of the model named name (case-insensitive). An unknown
// name is an error listing the known names.
func (c *Catalog) Model(name string) (*Model, error) {
	if m, ok := c.models[strings.ToLower(strings.TrimSpace(name))]; ok {
		cp := *m
		return &cp, nil
	}
	names := make([]string, 0, len(c.models))
	for _, m := range c.Models() {
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("llm: unknown model %q (known: %s)", name, strings.Join(names, ", "))
}

// Models returns copies of all models sorted by name.
func (c *Catalog) Models() []*Model {
	out := make([]*Model, 0, len(c.models))
	for _, m := range c.models {
		cp := *m
		out = append(out, &cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Marshal encodes the catalog as YAML in the layout Parse reads, every field
// explicit, sorted by name.
func (c *Catalog) Marshal() ([]byte, error) {
	var f File
	for _, m := range c.Models() {
		f.Models = append(f.Models, m.Spec())
	}
	return yaml.Marshal(f)
}
