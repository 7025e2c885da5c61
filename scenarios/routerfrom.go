package scenarios

import (
	"path/filepath"

	"gopkg.in/yaml.v3"

	"handoff/models/router"
)

// routerFrom reads router.from, an llm-d EndpointPickerConfig (resolved
// against the scenario's folder), as the router's llmd section: the
// section it maps to is written into the document, as if inline, so that
// defaults, checks, --set and the run treat both alike. Left out, the
// policy becomes llmd; another policy keeps the section as it keeps an
// inline one (a sweep may switch policies). The file must not also write
// router.llmd. Errors in the imported file name that file.
func (l *Loaded) routerFrom() error {
	rt := &l.Router
	if rt.From == "" {
		return nil
	}
	if rt.LLMD != nil {
		return l.errorf("router.llmd", "router.from sets the llmd section; write one or the other (edit the EndpointPickerConfig, or write the section inline to --set its fields)")
	}
	path := rt.From
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.Dir, path)
	}
	data, err := ReadFile(path)
	if err != nil {
		return l.errorf("router.from", "%v", err)
	}
	cfg, err := router.ReadEPP(data, path)
	if err != nil {
		return err
	}
	block := routerNode(l.root)
	if rt.Policy == "" {
		rt.Policy = "llmd"
		setKey(block, "policy", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "llmd"})
	}
	var section yaml.Node
	if err := section.Encode(&cfg); err != nil {
		return l.errorf("router.from", "%v", err)
	}
	// The section now stands for the file: the effective scenario writes
	// it inline, without router.from, and loads as this one.
	rt.LLMD, rt.From = &cfg, ""
	setKey(block, "llmd", &section)
	return nil
}

// routerNode returns the document's router mapping (router.from put it
// there).
func routerNode(root *yaml.Node) *yaml.Node {
	doc := root
	if doc.Kind == yaml.DocumentNode {
		doc = doc.Content[0]
	}
	for k := 0; k+1 < len(doc.Content); k += 2 {
		if doc.Content[k].Value == "router" {
			return doc.Content[k+1]
		}
	}
	panic("scenarios: router.from without a router block")
}

// setKey sets key to v in mapping m.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			m.Content[k+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}
