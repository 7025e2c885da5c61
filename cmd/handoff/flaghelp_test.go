package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagPlaceholders: every flag's help shows a one-word value
// placeholder (pflag takes the first `backquoted` word of the usage),
// and no backquote is left in the text it prints.
func TestFlagPlaceholders(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " -") || strings.Contains(usage, "`") {
				t.Errorf("%s --%s: placeholder %q, help %q", c.CommandPath(), f.Name, name, usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard))
}
