package hardware

import "testing"

// TestNouns: a fleet of one kind is called by that kind, a mixed one
// devices.
func TestNouns(t *testing.T) {
	for _, tt := range []struct {
		kinds []Kind
		want  string
	}{
		{[]Kind{KindGPU, KindGPU}, "GPU"},
		{[]Kind{KindTrainium}, "Trainium chip"},
		{[]Kind{KindWafer, KindWafer}, "wafer"},
		{[]Kind{KindLPU}, "LPU"},
		{[]Kind{KindGPU, KindWafer}, "device"},
		{[]Kind{KindTrainium, KindWafer, KindTrainium}, "device"},
		{[]Kind{"tpu"}, "device"},
		{nil, ""},
	} {
		got := ""
		for _, k := range tt.kinds {
			got = JoinNouns(got, k.Noun())
		}
		if got != tt.want {
			t.Errorf("%v: %q, want %q", tt.kinds, got, tt.want)
		}
	}
}
