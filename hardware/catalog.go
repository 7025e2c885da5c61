package hardware

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

// Catalog is a set of accelerators and links keyed by lower-case name. It is
// immutable once built except through AddAccelerator and AddLink; listings
// are sorted by name, so they are deterministic.
type Catalog struct {
	accels map[string]Accelerator
	links  map[string]Link
}

// File is the YAML layout of a catalog file: lists of accelerators and links.
type File struct {
	Accelerators []AcceleratorSpec `yaml:"accelerators,omitempty"`
	Links        []LinkSpec        `yaml:"links,omitempty"`
}

func newCatalog() *Catalog {
	return &Catalog{accels: map[string]Accelerator{}, links: map[string]Link{}}
}

// Default returns the catalog embedded in the binary (catalog.yaml), parsed
// afresh on each call (about 100 µs). It panics only if the embedded file is
// broken, which a test guards against.
func Default() *Catalog {
	c, err := parse(embeddedCatalog, "hardware/catalog.yaml", nil)
	if err != nil {
		panic("hardware: embedded catalog: " + err.Error())
	}
	return c
}

// Parse strictly decodes and validates a catalog file. A scale_up or
// scale_out link must
// be defined in the same file or in the default catalog. Every entry needs a
// source. Errors are *strictyaml.FieldError naming file, line and field.
func Parse(data []byte, file string) (*Catalog, error) {
	var def *Catalog
	return parse(data, file, func() *Catalog { // parsed only when needed
		if def == nil {
			def = Default()
		}
		return def
	})
}

// parse decodes data; base (may be nil) returns the catalog whose links
// scale_up may name besides the file's own.
func parse(data []byte, file string, base func() *Catalog) (*Catalog, error) {
	var f File
	root, err := strictyaml.Decode(data, file, &f)
	if err != nil {
		return nil, err
	}
	c := newCatalog()
	for i, s := range f.Links {
		path := fmt.Sprintf("links[%d]", i)
		l, err := s.Resolve()
		if err == nil && strings.TrimSpace(s.Source) == "" {
			err = strictyaml.Fieldf("source", "required: say where the figures come from")
		}
		if err == nil && c.hasLink(l.Name) {
			err = strictyaml.Fieldf("name", "duplicate link %q", l.Name)
		}
		if err != nil {
			return nil, strictyaml.Locate(root, file, path, err)
		}
		c.links[l.Name] = l
	}
	for i, s := range f.Accelerators {
		if err := c.addSpec(s, base); err != nil {
			return nil, strictyaml.Locate(root, file, fmt.Sprintf("accelerators[%d]", i), err)
		}
	}
	for i, s := range f.Accelerators {
		if err := c.borrowFactors(canonicalName(s.Name), base); err != nil {
			return nil, strictyaml.Locate(root, file, fmt.Sprintf("accelerators[%d]", i), err)
		}
	}
	return c, nil
}

// addSpec resolves one catalog accelerator and checks what only a catalog
// can: a source, a unique name and known scale-up and scale-out links.
func (c *Catalog) addSpec(s AcceleratorSpec, base func() *Catalog) error {
	a, err := s.Resolve()
	switch {
	case err != nil:
		return err
	case strings.TrimSpace(s.Source) == "":
		return strictyaml.Fieldf("source", "required: say where the figures come from")
	case c.hasAccelerator(a.Name):
		return strictyaml.Fieldf("name", "duplicate accelerator %q", a.Name)
	}
	if err := c.checkLink("scale_up", a.ScaleUpLink, base); err != nil {
		return err
	}
	if err := c.checkLink("scale_out", a.ScaleOutLink, base); err != nil {
		return err
	}
	if err := c.checkLink("pipeline_link", a.Wafer.PipelineLink, base); err != nil {
		return err
	}
	c.accels[a.Name] = a
	return nil
}

// checkLink reports an error at field unless name is empty or a link of c
// or of base's catalog (base may be nil).
func (c *Catalog) checkLink(field, name string, base func() *Catalog) error {
	if name == "" || c.hasLink(name) {
		return nil
	}
	var b *Catalog
	if base != nil {
		b = base()
	}
	if b.hasLink(name) {
		return nil
	}
	known := c.Merge(b).linkNames()
	return strictyaml.Fieldf(field, "unknown link %q (known: %s)", name, strings.Join(known, ", "))
}

// hasLink reports whether c (which may be nil) has a link named name.
func (c *Catalog) hasLink(name string) bool {
	if c == nil {
		return false
	}
	_, ok := c.links[name]
	return ok
}
func (c *Catalog) hasAccelerator(name string) bool { _, ok := c.accels[name]; return ok }

// Merge returns a new catalog holding c's entries overridden and extended by
// o's (an entry of o replaces c's entry of the same name). A nil o or c counts
// as empty. Neither input changes.
func (c *Catalog) Merge(o *Catalog) *Catalog {
	m := newCatalog()
	for _, src := range []*Catalog{c, o} {
		if src == nil {
			continue
		}
		for k, a := range src.accels {
			m.accels[k] = a
		}
		for k, l := range src.links {
			m.links[k] = l
		}
	}
	return m
}

// AddAccelerator adds or replaces a (a scenario's inline entry) under its
// lower-cased name. Validate a with AcceleratorSpec.Resolve first; it panics
// on an empty name.
func (c *Catalog) AddAccelerator(a Accelerator) {
	a.Name = canonicalName(a.Name)
	if a.Name == "" {
		panic("hardware: AddAccelerator with empty name")
	}
	if c.accels == nil {
		c.accels = map[string]Accelerator{}
	}
	c.accels[a.Name] = a
}

// AddLink adds or replaces l under its lower-cased name; it panics on an
// empty name.
func (c *Catalog) AddLink(l Link) {
	l.Name = canonicalName(l.Name)
	if l.Name == "" {
		panic("hardware: AddLink with empty name")
	}
	if c.links == nil {
		c.links = map[string]Link{}
	}
	c.links[l.Name] = l
}

// Accelerator returns the accelerator named name (case-insensitive). An
// unknown name is an error listing the known names.
func (c *Catalog) Accelerator(name string) (Accelerator, error) {
	if a, ok := c.accels[canonicalName(name)]; ok {
		return a, nil
	}
	names := make([]string, 0, len(c.accels))
	for _, a := range c.Accelerators() {
		names = append(names, a.Name)
	}
	return Accelerator{}, fmt.Errorf("hardware: unknown accelerator %q (known: %s)", name, strings.Join(names, ", "))
}

// Link returns the link named name (case-insensitive). An unknown name is an
// error listing the known names.
func (c *Catalog) Link(name string) (Link, error) {
	if l, ok := c.links[canonicalName(name)]; ok {
		return l, nil
	}
	return Link{}, fmt.Errorf("hardware: unknown link %q (known: %s)", name, strings.Join(c.linkNames(), ", "))
}

func (c *Catalog) linkNames() []string {
	names := make([]string, 0, len(c.links))
	for k := range c.links {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Accelerators returns all accelerators sorted by name.
func (c *Catalog) Accelerators() []Accelerator {
	out := make([]Accelerator, 0, len(c.accels))
	for _, a := range c.accels {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Links returns all links sorted by name.
func (c *Catalog) Links() []Link {
	out := make([]Link, 0, len(c.links))
	for _, l := range c.links {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// File returns the catalog in its YAML layout, sorted by name; encoding it
// with yaml.Marshal and parsing the result gives an equal catalog.
func (c *Catalog) File() File {
	var f File
	for _, a := range c.Accelerators() {
		f.Accelerators = append(f.Accelerators, a.Spec())
	}
	for _, l := range c.Links() {
		f.Links = append(f.Links, l.Spec())
	}
	return f
}

// Marshal encodes the catalog as YAML in the layout Parse reads.
func (c *Catalog) Marshal() ([]byte, error) { return yaml.Marshal(c.File()) }
