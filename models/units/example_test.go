package units_test

import (
	"fmt"

	"handoff/models/units"
)

func ExampleParseBandwidth() {
	nvlink, _ := units.ParseBandwidth("450GB/s")
	ib, _ := units.ParseBandwidth("400Gb/s") // bits: divided by 8
	fmt.Println(nvlink, ib, units.FormatBandwidth(ib))
	_, err := units.ParseBandwidth("50GBs")
	fmt.Println(err)
	// Output:
	// 4.5e+11 5e+10 50GB/s
	// bad bandwidth "50GBs": want a number and a unit such as 50GB/s (units: B/s, KB/s, kB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s, b/s, bps, Kb/s, Kbps, kb/s, kbps, Mb/s, Mbps, Gb/s, Gbps, Tb/s, Tbps, Pb/s, Pbps)
}

func ExampleParseDuration() {
	ns, _ := units.ParseDuration("1.5m")
	fmt.Println(ns, units.FormatDuration(ns), units.FormatDuration(1_500_000))
	// Output: 90000000000 90s 1.5ms
}
