package strictyaml

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// segment is one step of a dotted path: a mapping key or a sequence index.
type segment struct {
	key   string
	index int // used when isIndex
	isIdx bool
}

// parsePath splits "pools[1].engine.block_size" into segments. ok is false
// for malformed paths (empty keys, bad indexes).
func parsePath(path string) (segs []segment, ok bool) {
	if path == "" {
		return nil, true
	}
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && (rest == "" || len(segs) == 0 && part[0] != '[') {
			return nil, false
		}
		if key != "" {
			segs = append(segs, segment{key: key})
		}
		for rest != "" {
			num, after, found := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !found || err != nil || i < 0 {
				return nil, false
			}
			segs = append(segs, segment{index: i, isIdx: true})
			if after == "" {
				break
			}
			if after[0] != '[' {
				return nil, false
			}
			rest = after[1:]
		}
	}
	return segs, true
}

// Find returns the node at a dotted path such as "pools[1].engine.block_size"
// (mapping keys separated by dots, [i] indexing into sequences), or nil when
// the path does not exist. For a mapping entry it returns the value node. The
// empty path is the document's top-level node. Cost: linear in the sizes of
// the mappings along the path.
func Find(root *yaml.Node, path string) *yaml.Node {
	segs, ok := parsePath(path)
	n := body(root)
	if !ok || n == nil {
		return nil
	}
	for _, s := range segs {
		n, _ = step(n, s)
		if n == nil {
			return nil
		}
	}
	return n
}

// walk follows path as far as it exists and returns the deepest node reached
// and its line: for a mapping entry the line of its key (a block mapping's
// value starts on the next line), for a sequence item its own line.
func walk(root *yaml.Node, path string) (*yaml.Node, int) {
	n := body(root)
	if n == nil {
		return nil, 0
	}
	line := n.Line
	segs, _ := parsePath(path) // a malformed path stops at the root
	for _, s := range segs {
		next, l := step(n, s)
		if next == nil {
			break
		}
		n, line = next, l
	}
	return n, line
}

// step moves from n along one segment, returning the child and the line to
// report for it, or nil.
func step(n *yaml.Node, s segment) (*yaml.Node, int) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case s.isIdx && n.Kind == yaml.SequenceNode:
		if s.index < len(n.Content) {
			c := n.Content[s.index]
			return c, c.Line
		}
	case !s.isIdx && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == s.key {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	}
	return nil, 0
}

// pathOf searches the tree depth-first for the first node (a mapping key or
// a value) for which match is true and returns its dotted path. A key and
// its value share a path.
func pathOf(root *yaml.Node, match func(n *yaml.Node, isKey bool) bool) (string, bool) {
	return search(body(root), "", match, 0)
}

// maxDepth bounds the search so a pathological document cannot exhaust the
// stack.
const maxDepth = 100

func search(n *yaml.Node, path string, match func(*yaml.Node, bool) bool, depth int) (string, bool) {
	if n == nil || depth > maxDepth {
		return "", false
	}
	if match(n, false) {
		return path, true
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := Join(path, n.Content[i].Value)
			if match(n.Content[i], true) {
				return p, true
			}
			if found, ok := search(n.Content[i+1], p, match, depth+1); ok {
				return found, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if found, ok := search(c, Join(path, "["+strconv.Itoa(i)+"]"), match, depth+1); ok {
				return found, true
			}
		}
	}
	return "", false
}
