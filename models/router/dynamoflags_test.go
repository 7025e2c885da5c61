package router

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDynamoFlagsDocumented: every flag's knob is a router.dynamo field
// (or the policy), and docs/DYNAMO-ROUTER.md lists every flag with it.
func TestDynamoFlagsDocumented(t *testing.T) {
	tags := map[string]bool{"policy": true}
	rt := reflect.TypeOf(DynamoConfig{})
	for i := range rt.NumField() {
		tags[strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0]] = true
	}
	doc, err := os.ReadFile("../../docs/DYNAMO-ROUTER.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, fk := range DynamoFlagKnobs() {
		knob, _, _ := strings.Cut(fk[1], ":")
		if !tags[knob] {
			t.Errorf("%s sets %q, not a router.dynamo field", fk[0], knob)
		}
		if !strings.Contains(string(doc), "`"+fk[0]) {
			t.Errorf("%s is not in docs/DYNAMO-ROUTER.md's table", fk[0])
		}
	}
}

// TestIsDynamoFlags tells a flags file from YAML by its first word.
func TestIsDynamoFlags(t *testing.T) {
	for doc, want := range map[string]bool{
		"# comment\n\n  --router-mode kv\n": true,
		"kind: EndpointPickerConfig\n":      false,
		"# --router-mode kv\nkind: x\n":     false,
		"":                                  false,
	} {
		if got := IsDynamoFlags([]byte(doc)); got != want {
			t.Errorf("IsDynamoFlags(%q) = %v", doc, got)
		}
	}
}
