package perf

import (
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
)

// catalogModel returns the embedded catalog's model name.
func catalogModel(t testing.TB, name string) *llm.Model {
	t.Helper()
	m, err := llm.Default().Model(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// catalogDevice returns the embedded catalog's accelerator name and its
// scale-up link.
func catalogDevice(t testing.TB, name string) (hardware.Accelerator, hardware.Link) {
	t.Helper()
	c := hardware.Default()
	d, err := c.Accelerator(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Link(d.ScaleUpLink)
	if err != nil {
		t.Fatal(err)
	}
	return d, l
}
