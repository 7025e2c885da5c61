package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableNamesDevices: the table's header and per-device goodput call
// the devices by the fleet's kind, "devices" for a mix or a summary that
// does not say (an older summary.json), and count one in the singular.
func TestTableNamesDevices(t *testing.T) {
	for _, tt := range []struct {
		gpus          int
		device        string
		header, share string
	}{
		{4, "GPU", "seed 0   4 GPUs\n", "(0.500 per GPU)"},
		{1, "GPU", "seed 0   1 GPU\n", "(2.000 per GPU)"},
		{2, "wafer", "seed 0   2 wafers\n", "(1.000 per wafer)"},
		{16, "Trainium chip", "seed 0   16 Trainium chips\n", "(0.125 per Trainium chip)"},
		{16, "device", "seed 0   16 devices\n", "(0.125 per device)"},
		{16, "", "seed 0   16 devices\n", "(0.125 per device)"},
	} {
		s := Summary{Scenario: "s", GPUs: tt.gpus, Device: tt.device}
		s.SLO.RequestGoodputRPS, s.SLO.RequestGoodputRPSPerGPU = 2, 2/float64(tt.gpus)
		var b bytes.Buffer
		if err := WriteTable(&b, s); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.header) || !strings.Contains(b.String(), tt.share) {
			t.Errorf("%d %q: want %q and %q in\n%s", tt.gpus, tt.device, tt.header, tt.share, b.String())
		}
	}
}
