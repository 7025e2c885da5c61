package hardware

import "testing"

// BenchmarkDefault measures parsing the embedded catalog.
func BenchmarkDefault(b *testing.B) {
	for b.Loop() {
		Default()
	}
}
