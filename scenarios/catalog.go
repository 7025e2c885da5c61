package scenarios

import (
	"fmt"
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
// files, then by its inline entries.
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
		if err := addEntries(hw, models, cf, func(field string, err error) error {
			return strictyaml.Locate(root, path, field, err)
		}); err != nil {
			return nil, nil, err
		}
	}
	inline := catalogFile{l.Catalog.Accelerators, l.Catalog.Links, l.Catalog.Models}
	err := addEntries(hw, models, inline, func(field string, err error) error {
		return l.locate("catalog."+field, err)
	})
	return hw, models, err
}

// addEntries resolves and adds entries; locate places an error at a field.
func addEntries(hw *hardware.Catalog, models *llm.Catalog, cf catalogFile, locate func(string, error) error) error {
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
		m, err := s.Resolve()
		if err != nil {
			return locate(fmt.Sprintf("models[%d]", i), err)
		}
		models.AddModel(m)
	}
	return nil
}
