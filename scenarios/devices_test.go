package scenarios

import "testing"

// TestBuiltDeviceNoun: a fleet's devices are called by their kind when
// every pool's accelerator is of one kind, and devices when the kinds mix.
func TestBuiltDeviceNoun(t *testing.T) {
	const mixed = "trainium-prefill-wafer-decode.yaml"
	for _, tt := range []struct {
		file string
		sets []string
		want string
		gpus int
	}{
		{"quickstart.yaml", nil, "GPU", 4},
		{mixed, nil, "device", 2*4 + 2*4},
		{mixed, []string{"pools.decode.hardware=trainium2", "pools.decode.wafer=null", "pools.decode.tp=4"}, "Trainium chip", 16},
		{mixed, []string{"pools.prefill.hardware=h100-sxm"}, "device", 16},
	} {
		var sets []Set
		for _, s := range tt.sets {
			set, err := ParseSet(s)
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, set)
		}
		l, err := Load(tt.file, sets...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Build()
		if err != nil {
			t.Fatalf("%s %v: %v", tt.file, tt.sets, err)
		}
		b.Close()
		if b.Device != tt.want || b.GPUs != tt.gpus {
			t.Errorf("%s %v: %d %q, want %d %q", tt.file, tt.sets, b.GPUs, b.Device, tt.gpus, tt.want)
		}
	}
}
