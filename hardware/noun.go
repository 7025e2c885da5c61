package hardware

// DeviceNoun is what devices of several kinds are called together, when
// they are counted ("6 devices", "per device").
const DeviceNoun = "device"

// Noun is what one accelerator of kind k is called when devices are
// counted ("4 GPUs", "per wafer"): an unknown kind is a device.
func (k Kind) Noun() string {
	switch k {
	case KindGPU:
		return "GPU"
	case KindTrainium:
		return "Trainium chip"
	case KindWafer:
		return "wafer"
	case KindLPU:
		return "LPU"
	}
	return DeviceNoun
}

// JoinNouns returns what the devices of a fleet are called when some are
// called a and the others b: the noun they share, or DeviceNoun when they
// differ; "" stands for no devices yet.
func JoinNouns(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return DeviceNoun
}
