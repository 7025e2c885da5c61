package units

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Bytes is a size in bytes, written in YAML as "80GB" or "96GiB".
type Bytes float64

// Bandwidth is a transfer rate in bytes per second, written in YAML as
// "50GB/s" or "400Gb/s".
type Bandwidth float64

// Duration is a time span in nanoseconds, written in YAML as "150ms" or "2s";
// a bare 0 is allowed.
type Duration int64

// Rate is an event rate per second, written in YAML as "10/s" or "600/min".
type Rate float64

// FLOPS is a compute rate in floating-point operations per second, written in
// YAML as "989.5TFLOPS".
type FLOPS float64

// scalar returns the text of a YAML scalar node, or an error naming the line
// when the node is a mapping or sequence. The error is a *yaml.TypeError so
// the decoder keeps going and reports errors in document order.
func scalar(n *yaml.Node, kind, example string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", lineError(n, fmt.Errorf("bad %s: want a number and a unit such as %s, not a list or mapping", kind, example))
	}
	return n.Value, nil
}

// lineError wraps err as a *yaml.TypeError whose text starts "line N: ".
func lineError(n *yaml.Node, err error) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
}

// decodeFloat parses a scalar node with parse and reports errors with its line.
func decodeFloat(n *yaml.Node, q quantity, parse func(string) (float64, error)) (float64, error) {
	s, err := scalar(n, q.kind, q.example)
	if err != nil {
		return 0, err
	}
	v, err := parse(s)
	if err != nil {
		return 0, lineError(n, err)
	}
	return v, nil
}

// UnmarshalYAML parses a size such as "80GB".
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	v, err := decodeFloat(n, bytesQ, ParseBytes)
	*b = Bytes(v)
	return err
}

// MarshalYAML writes the canonical form, e.g. "80GB".
func (b Bytes) MarshalYAML() (any, error) { return FormatBytes(float64(b)), nil }

// String returns the canonical form.
func (b Bytes) String() string { return FormatBytes(float64(b)) }

// UnmarshalYAML parses a rate such as "50GB/s" or "400Gb/s".
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	v, err := decodeFloat(n, bandwidthQ, ParseBandwidth)
	*b = Bandwidth(v)
	return err
}

// MarshalYAML writes the canonical form in bytes per second, e.g. "50GB/s".
func (b Bandwidth) MarshalYAML() (any, error) { return FormatBandwidth(float64(b)), nil }

// String returns the canonical form.
func (b Bandwidth) String() string { return FormatBandwidth(float64(b)) }

// UnmarshalYAML parses a duration such as "150ms" or a bare 0.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, durationQ.kind, durationQ.example)
	if err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return lineError(n, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the canonical form, e.g. "150ms".
func (d Duration) MarshalYAML() (any, error) { return FormatDuration(int64(d)), nil }

// String returns the canonical form.
func (d Duration) String() string { return FormatDuration(int64(d)) }

// UnmarshalYAML parses a rate such as "10/s" or "600/min".
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	v, err := decodeFloat(n, rateQ, ParseRate)
	*r = Rate(v)
	return err
}

// MarshalYAML writes the canonical form in events per second, e.g. "10/s".
func (r Rate) MarshalYAML() (any, error) { return FormatRate(float64(r)), nil }

// String returns the canonical form.
func (r Rate) String() string { return FormatRate(float64(r)) }

// UnmarshalYAML parses a compute rate such as "989.5TFLOPS".
func (f *FLOPS) UnmarshalYAML(n *yaml.Node) error {
	v, err := decodeFloat(n, flopsQ, ParseFLOPS)
	*f = FLOPS(v)
	return err
}

// MarshalYAML writes the canonical form, e.g. "989.5TFLOPS".
func (f FLOPS) MarshalYAML() (any, error) { return FormatFLOPS(float64(f)), nil }

// String returns the canonical form.
func (f FLOPS) String() string { return FormatFLOPS(float64(f)) }
