package scenarios

import (
	"strings"
	"testing"
)

// TestContextRangeBadInput: a pool's context_length_range is [min, max]
// with 0 ≤ min ≤ max and max ≥ 1, else one error naming the file, line
// and field; a good one reaches the pool's instances.
func TestContextRangeBadInput(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		built      [2]int
	}{
		{"[0]", "m.yaml:13: field pools[0].context_length_range: must be [min, max] in tokens, got 1 numbers", [2]int{}},
		{"[0, 1, 2]", "got 3 numbers", [2]int{}},
		{"[10, 5]", "m.yaml:13: field pools[0].context_length_range: must satisfy 0 ≤ min ≤ max", [2]int{}},
		{"[-1, 5]", "m.yaml:13: field pools[0].context_length_range: must satisfy 0 ≤ min ≤ max", [2]int{}},
		{"[0, 0]", "m.yaml:13: field pools[0].context_length_range: must satisfy 0 ≤ min ≤ max, 1 ≤ max", [2]int{}},
		{"[0, 1.5e3]", "m.yaml:13: field pools[0].context_length_range", [2]int{}},
		{"[0, 2048]", "", [2]int{0, 2048}},
		{"[512, 512]", "", [2]int{512, 512}},
	} {
		doc := minimal + "    context_length_range: " + tc.line + "\n"
		l, err := Parse([]byte(doc), "m.yaml")
		var b *Built
		if err == nil {
			b, err = l.Build()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want it to build", tc.line, err)
		case tc.want == "" && b.Config.Instances[0].ContextRange != tc.built:
			t.Errorf("%s: instance range %v, want %v", tc.line, b.Config.Instances[0].ContextRange, tc.built)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.line, err, tc.want)
		}
	}
}
