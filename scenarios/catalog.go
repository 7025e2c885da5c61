package scenarios

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/strictyaml"
)

// catalogFile is the shape of a catalog file a scenario points to: new or
// overriding accelerators, links and models, in the built-in catalogs' form.
type catalogFile struct {
	Accelerators []hardware.AcceleratorSpec `yaml:"accelerators"`
	Links        []hardware.LinkSpec        `yaml:"links"`
	Models       []llm.Spec                 `yaml:"models"`
}

// builtin is the built-in catalogs, parsed once: parsing them takes about
// 4 ms, which every load and build of a scenario paid twice — in a sweep
// or a goodput search, for every point and probe. A scenario's catalogs
// are copies of them (Merge), which its entries extend without changing
// them.
var builtin = sync.OnceValues(func() (*hardware.Catalog, *llm.Catalog) { return hardware.Default(), llm.Default() })

// catalogs returns the built-in catalogs extended by the scenario's catalog
// files, then by its inline entries. A model entry that names a config
// file reads it, the path resolved against the folder of the file that
// names it.
func (l *Loaded) catalogs() (*hardware.Catalog, *llm.Catalog, error) {
	hw0, models0 := builtin()
	hw, models := hw0.Merge(nil), models0.Merge(nil)
	for i, name := range l.Catalog.Files {
		path := l.Resolve(name)
		data, err := ReadFile(path)
		if err != nil {
			return nil, nil, l.errorf(fmt.Sprintf("catalog.files[%d]", i), "%v", err)
		}
		var cf catalogFile
		root, err := strictyaml.Decode(data, path, &cf)
		if err != nil {
			return nil, nil, err
		}
		if err := addEntries(hw, models, cf, entryFiles{
			locate:  func(field string, err error) error { return strictyaml.Locate(root, path, field, err) },
			resolve: func(p string) string { return resolveFrom(filepath.Dir(path), p) },
		}); err != nil {
			return nil, nil, err
		}
	}
	inline := catalogFile{l.Catalog.Accelerators, l.Catalog.Links, l.Catalog.Models}
	err := addEntries(hw, models, inline, entryFiles{
		locate:  func(field string, err error) error { return l.locate("catalog."+field, err) },
		resolve: l.Resolve,
	})
	return hw, models, err
}

// entryFiles is what adding a file's entries needs of it: locate places an
// error at a field, resolve a path the file names.
type entryFiles struct {
	locate  func(field string, err error) error
	resolve func(path string) string
}

// addEntries resolves and adds entries.
func addEntries(hw *hardware.Catalog, models *llm.Catalog, cf catalogFile, in entryFiles) error {
	locate := in.locate
	for i, s := range cf.Links {
		l, err := s.Resolve()
		if err != nil {
			return locate(fmt.Sprintf("links[%d]", i), err)
		}
		hw.AddLink(l)
	}
	for i, s := range cf.Accelerators {
		a, err := s.Resolve()
		if err != nil {
			return locate(fmt.Sprintf("accelerators[%d]", i), err)
		}
		hw.AddAccelerator(a)
	}
	for i, s := range cf.Models {
		m, err := resolveModel(s, in.resolve)
		if err != nil {
			return locate(fmt.Sprintf("models[%d]", i), err)
		}
		models.AddModel(m)
	}
	return nil
}

// resolveModel resolves a catalog model entry: one written out, or one
// that names a config.json (read with llm.ReadHFConfig; the entry's name,
// else the file's, names it, and its source, if any, replaces the
// reader's).
func resolveModel(s llm.Spec, resolve func(string) string) (*llm.Model, error) {
	if s.Config == "" {
		return s.Resolve()
	}
	if err := s.ConfigOnly(); err != nil {
		return nil, err
	}
	path := resolve(s.Config)
	name := s.Name
	if name == "" {
		name = configName(path)
	}
	m, err := readConfigModel(path, name)
	if err != nil {
		return nil, strictyaml.Fieldf("config", "%v", err)
	}
	if s.Source != "" {
		m.Source = s.Source
	}
	return m, nil
}

// readConfigModel reads the model of a config.json file.
func readConfigModel(path, name string) (*llm.Model, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return llm.ReadHFConfig(data, path, name)
}

// IsConfigPath reports whether a scenario's model field names a
// config.json file (a value ending in .json) rather than a catalog model.
func IsConfigPath(model string) bool { return strings.HasSuffix(strings.ToLower(model), ".json") }

// configName is the catalog name of a model read from path: the file's
// name without .json and a .config before it ("qwen3-32b.config.json" is
// qwen3-32b), or for a file named config.json its folder's, lower-cased,
// spaces made dashes.
func configName(path string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".json"), ".config")
	if base == "config" || base == "" {
		base = strings.ToLower(filepath.Base(filepath.Dir(path)))
	}
	return strings.Join(strings.Fields(base), "-")
}

// resolveFrom returns p, relative to dir unless absolute.
func resolveFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// model returns the scenario's served model: read from the config.json its
// model field names, or found in the catalog.
func (l *Loaded) model(models *llm.Catalog) (*llm.Model, error) {
	if IsConfigPath(l.Model) {
		path := l.Resolve(l.Model)
		m, err := readConfigModel(path, configName(path))
		if err != nil {
			return nil, l.errorf("model", "%v", err)
		}
		return m, nil
	}
	m, err := models.Model(l.Model)
	if err != nil {
		return nil, l.errorf("model", "%s", strings.TrimPrefix(err.Error(), "llm: "))
	}
	return m, nil
}
