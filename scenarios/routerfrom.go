package scenarios

import (
	"path/filepath"

	"gopkg.in/yaml.v3"

	"handoff/models/router"
)

// routerFrom reads router.from (resolved against the scenario's folder)
// as a router section: an llm-d EndpointPickerConfig as router.llmd, or a
// Dynamo flags file (its first word a flag) as router.dynamo. The section
// it maps to is written into the document, as if inline, so that
// defaults, checks, --set and the run treat both alike. Left out, the
// policy becomes llmd or dynamo; another policy keeps the section as it
// keeps an inline one (a sweep may switch policies). The file must not
// also write that section. Errors in the imported file name that file.
func (l *Loaded) routerFrom() error {
	rt := &l.Router
	if rt.From == "" {
		return nil
	}
	path := rt.From
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.Dir, path)
	}
	data, err := ReadFile(path)
	if err != nil {
		return l.errorf("router.from", "%v", err)
	}
	if router.IsDynamoFlags(data) {
		return l.fromDynamo(data, path)
	}
	return l.fromEPP(data, path)
}

// fromEPP reads an EndpointPickerConfig as router.llmd.
func (l *Loaded) fromEPP(data []byte, path string) error {
	rt := &l.Router
	if rt.LLMD != nil {
		return l.errorf("router.llmd", "router.from sets the llmd section; write one or the other (edit the EndpointPickerConfig, or write the section inline to --set its fields)")
	}
	cfg, err := router.ReadEPP(data, path)
	if err != nil {
		return err
	}
	if err := l.writeSection("llmd", &cfg); err != nil {
		return err
	}
	rt.LLMD = &cfg
	return nil
}

// fromDynamo reads a Dynamo flags file as router.dynamo.
func (l *Loaded) fromDynamo(data []byte, path string) error {
	rt := &l.Router
	if rt.Dynamo != nil {
		return l.errorf("router.dynamo", "router.from sets the dynamo section; write one or the other (edit the flags file, or write the section inline to --set its fields)")
	}
	cfg, err := router.ReadDynamoFlags(data, path)
	if err != nil {
		return err
	}
	if err := l.writeSection("dynamo", &cfg); err != nil {
		return err
	}
	rt.Dynamo = &cfg
	return nil
}

// writeSection writes cfg into the document's router block as section and
// drops router.from: the effective scenario writes the section inline and
// loads as this one. An unset policy becomes the section's.
func (l *Loaded) writeSection(section string, cfg any) error {
	block := routerNode(l.root)
	if l.Router.Policy == "" {
		l.Router.Policy = section
		setKey(block, "policy", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: section})
	}
	var node yaml.Node
	if err := node.Encode(cfg); err != nil {
		return l.errorf("router.from", "%v", err)
	}
	setKey(block, section, &node)
	l.Router.From = ""
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
