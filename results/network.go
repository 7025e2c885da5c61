package results

import "strings"

// LinkInfo is one link's traffic over a run.
type LinkInfo struct {
	Name      string
	Bytes     float64
	BusyNs    int64
	Transfers int64
}

// NetworkSummary is the KV traffic of a run: the transfers and bytes
// instances sent (Σ over their egress links, so each transfer counts once)
// and the bytes that crossed a datacenter boundary (Σ over the
// datacenters' WAN egress links).
type NetworkSummary struct {
	Transfers int64   `json:"transfers"`
	Bytes     float64 `json:"bytes"`
	WANBytes  float64 `json:"wan_bytes"`
}

// summarizeNetwork adds up the links by kind: an instance's egress link
// ("…/egress", "…/domain-egress", "…/scaleout-egress") carries every
// transfer it sends once; a datacenter's "…/wan-egress" every byte that
// leaves it.
func summarizeNetwork(links []LinkInfo) NetworkSummary {
	var n NetworkSummary
	for _, l := range links {
		switch {
		case strings.HasSuffix(l.Name, "/wan-egress"):
			n.WANBytes += l.Bytes
		case strings.HasSuffix(l.Name, "egress"):
			n.Bytes += l.Bytes
			n.Transfers += l.Transfers
		}
	}
	return n
}
