// Package sweep expands a scenario's sweep block into points and slices
// them into shards. It is pure: no I/O, no clock, no randomness; the same
// Spec always expands to the same points in the same order.
//
// A sweep block names dotted scenario paths (as --set takes them) and the
// values to try:
//
//	sweep:
//	  grid:                        # cartesian product, first axis slowest
//	    pools.decode.count: [1, 2, 4]
//	    router.policy: [round_robin, least_loaded]
//	  zip:                         # paired by position, one axis together
//	    workload.rate_scale: [1, 2]
//	    slo.ttft: [1s, 2s]
//	  replicas: 3                  # seeds seed, seed+1, seed+2 (fastest)
//
// Expand turns it into Points, each a list of Overrides that the caller
// applies with the scenario package's --set machinery, which checks the
// paths against the schema. Shard picks a deterministic slice of them.
package sweep

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec is a scenario's sweep block.
type Spec struct {
	Grid     Axes `yaml:"grid,omitempty"`     // every combination
	Zip      Axes `yaml:"zip,omitempty"`      // same-length lists, paired by position
	Replicas int  `yaml:"replicas,omitempty"` // runs per combination with seeds seed, seed+1, …; 0 or 1 = one
}

// Axis is one varied scenario field.
type Axis struct {
	Path   string   // dotted scenario path, as for --set: "pools.decode.count"
	Values []string // YAML values, each as --set takes it: "4", "{max_num_seqs: 64}"
	Line   int      // line of Path in the scenario file; 0 = unknown
	vary   bool     // from a --vary flag, not the file
	named  string   // the field Path names ("pools[0].count"), once resolved; "" = Path
}

// Axes is an ordered mapping from path to values; in YAML a mapping whose
// keys are paths and whose values are lists. Order is the file's order.
type Axes []Axis

// UnmarshalYAML decodes a mapping of path: [values...], keeping order.
// Values are rendered back to single-line YAML text.
func (a *Axes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		*a = nil
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return typeError(n, "want a mapping of path: [values], got %s", kindName(n))
	}
	out := make(Axes, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if v.Kind == yaml.ScalarNode { // the strict decoder finds the field from the quoted value
			return typeError(v, "want a list of values, got %q", v.Value)
		}
		if v.Kind != yaml.SequenceNode {
			return typeError(v, "%s: want a list of values, got %s", k.Value, kindName(v))
		}
		ax := Axis{Path: k.Value, Line: k.Line, Values: make([]string, 0, len(v.Content))}
		for _, el := range v.Content {
			text, err := valueText(el)
			if err != nil {
				return typeError(el, "%s: %v", k.Value, err)
			}
			ax.Values = append(ax.Values, text)
		}
		out = append(out, ax)
	}
	*a = out
	return nil
}

// MarshalYAML renders the axes as a mapping of flow-style lists, which
// decodes back to the same axes.
func (a Axes) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, ax := range a {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, v := range ax.Values {
			seq.Content = append(seq.Content, valueNode(v))
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ax.Path}, seq)
	}
	return m, nil
}

// valueNode parses a value the way --set does: as YAML, or failing that as
// a plain string.
func valueNode(v string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	}
	return doc.Content[0]
}

// valueText renders one value as single-line YAML that reads alone (as
// --set reads it) as the same value: a scalar that needs no quotes as its
// text (an empty plain one as null); anything else (strings that would
// read as numbers, mappings, lists) in flow style. Rendering and decoding
// again gives the same text.
func valueText(n *yaml.Node) (string, error) {
	n = resolve(n)
	budget := maxValueNodes
	if tag := localTag(n, 0, &budget); tag != "" {
		return "", fmt.Errorf("tag %s is not allowed in a sweep value", tag)
	}
	if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value == "" {
		return "null", nil // an empty plain scalar is null; as --set text "" would be a string
	}
	if readsSame(n) {
		return n.Value, nil
	}
	budget = maxValueNodes
	flow := flowCopy(n, 0, &budget)
	if budget < 0 {
		return "", fmt.Errorf("value has more than %d parts", maxValueNodes)
	}
	out, err := yaml.Marshal(flow)
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(string(out))
	if strings.ContainsAny(text, "\n\r") {
		return "", fmt.Errorf("value does not fit on one line")
	}
	return text, nil
}

// localTag returns the first tag in n that is not a standard one ("!!int"),
// or "". It looks at no more nodes than budget holds (flowCopy then
// reports the value as too large).
func localTag(n *yaml.Node, depth int, budget *int) string {
	n = resolve(n)
	if n.Tag != "" && !strings.HasPrefix(n.Tag, "!!") {
		return n.Tag
	}
	if *budget--; *budget >= 0 && depth < maxDepth {
		for _, c := range n.Content {
			if t := localTag(c, depth+1, budget); t != "" {
				return t
			}
		}
	}
	return ""
}

// readsSame reports whether a scalar's bare text, read alone as --set
// reads it, is the same plain scalar: "two" and 2s are; "1" quoted (it
// would read as an integer), " a", and "k:" (in a flow list a string,
// alone a mapping) are not.
func readsSame(n *yaml.Node) bool {
	quoted := yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle
	if n.Kind != yaml.ScalarNode || n.Style&^quoted != 0 || n.Value == "" || strings.ContainsAny(n.Value, "\n\r") {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(n.Value), &doc) != nil || len(doc.Content) != 1 {
		return false
	}
	c := doc.Content[0]
	return c.Kind == yaml.ScalarNode && c.Style == 0 && c.Value == n.Value && c.ShortTag() == n.ShortTag()
}

// maxDepth bounds the nesting of a value, so a pathological document
// cannot exhaust the stack.
const maxDepth = 50

// maxValueNodes bounds the nodes of one value with its aliases expanded,
// so nested aliases ("billion laughs") cannot blow up.
const maxValueNodes = 10_000

// flowCopy copies n in flow style without comments; literal and folded
// scalars become double-quoted. Each node copied takes one from budget;
// copying stops when it runs out (budget < 0).
func flowCopy(n *yaml.Node, depth int, budget *int) *yaml.Node {
	n = resolve(n)
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value, Style: n.Style}
	if *budget--; *budget < 0 {
		return c
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			c.Style = yaml.DoubleQuotedStyle
		}
	case yaml.MappingNode, yaml.SequenceNode:
		c.Style = yaml.FlowStyle
		if depth < maxDepth {
			for _, ch := range n.Content {
				c.Content = append(c.Content, flowCopy(ch, depth+1, budget))
			}
		}
	}
	return c
}

// resolve follows an alias to its anchor.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// typeError is a decoding error at n's line, in the form the strict
// decoder (models/strictyaml) turns into a field-named error.
func typeError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, args...))}}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}
