package results

import "fmt"

// deviceNoun is what devices are called when their kind is not known.
const deviceNoun = "device"

// DeviceNoun returns what s's devices are called: s.Device ("GPU",
// "Trainium chip", "wafer", "LPU", or "device" for a fleet of several
// kinds), or "device" for a summary.json of an older version, which did
// not record it.
func (s *Summary) DeviceNoun() string {
	if s.Device == "" {
		return deviceNoun
	}
	return s.Device
}

// Devices writes a count of devices called noun: "1 GPU", "4 GPUs",
// "2 Trainium chips", "6 devices".
func Devices(n int, noun string) string { return Count(n, noun) }

// Count writes n things called noun, whose plural is noun + "s": "1
// instance", "4 instances".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
