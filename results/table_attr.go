package results

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// writePreemption writes the preemption line, or nothing when no request
// was preempted, rejected or locked up.
func writePreemption(b *bytes.Buffer, p PreemptionSummary) {
	if !p.any() {
		return
	}
	fmt.Fprintf(b, "%-11s %d preemptions   %d re-prefill tokens   decoder prefill %.1f%%", "preemption",
		p.Count, p.ReprefillTokens, 100*p.DecoderPrefillShare)
	if p.Cascades > 0 {
		fmt.Fprintf(b, "   cascades %d (longest %d, %.2f s)", p.Cascades, p.LongestCascade, p.CascadeS)
	}
	if p.Lockups > 0 {
		fmt.Fprintf(b, "   lock-ups %d (%.2f s)", p.Lockups, p.LockupS)
	}
	if p.SwapOuts > 0 {
		fmt.Fprintf(b, "   swap-outs %d", p.SwapOuts)
	}
	if p.Rejections > 0 || p.WastedTokens > 0 {
		fmt.Fprintf(b, "   rejections %d (%d tokens wasted)", p.Rejections, p.WastedTokens)
	}
	b.WriteByte('\n')
}

// writeAttribution writes the mean completed request's time components,
// TTFT in ms and decode in s (zero components left out), and each owner's
// share of mean TTFT and decode time.
func writeAttribution(b *bytes.Buffer, a Attribution) {
	fmt.Fprintf(b, "%-11s mean per completed request\n", "attribution")
	fmt.Fprintf(b, "%-11s %s\n", "  TTFT ms", componentList(a.TTFTS, TimeNames[:FirstDecodeTime], 1e3))
	fmt.Fprintf(b, "%-11s %s\n", "  decode s", componentList(a.DecodeS, TimeNames[FirstDecodeTime:], 1))
	fmt.Fprintf(b, "%-11s TTFT: %s   decode: %s\n", "  by owner",
		ownerShares(a.ByOwner, func(t OwnerTime) float64 { return t.TTFTS }),
		ownerShares(a.ByOwner, func(t OwnerTime) float64 { return t.DecodeS }))
}

// writeWaits writes why requests waited for admission, each side's causes
// as shares of its total wait, when any did.
func writeWaits(b *bytes.Buffer, w WaitSummary) {
	var parts []string
	for _, side := range []struct {
		name string
		s    map[string]float64
	}{{"prefill side", w.PrefillS}, {"decode side", w.DecodeS}} {
		total := 0.0
		for _, name := range WaitNames { // in order: map order would change the rounding
			total += side.s[name]
		}
		if total > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s of %.2f s", side.name, shareList(side.s), total))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "%-11s %s\n", "  waited", strings.Join(parts, "   "))
	}
}

// componentList renders the non-zero components, in names' order, as
// "name value" scaled from seconds; "-" if all are zero.
func componentList(means map[string]float64, names []string, scale float64) string {
	var parts []string
	for _, name := range names {
		if v := means[name]; v != 0 {
			parts = append(parts, fmt.Sprintf("%s %.3f", name, v*scale))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "   ")
}

// ownerShares renders each owner's share of the total of part over all
// owners, largest first (ties by name), as whole percentages ("<1%" for a
// non-zero share that rounds to 0), leaving out zero shares; "-" if the
// total is zero.
func ownerShares(byOwner map[string]OwnerTime, part func(OwnerTime) float64) string {
	m := make(map[string]float64, len(byOwner))
	for owner, t := range byOwner {
		m[owner] = part(t)
	}
	return shareList(m)
}

// shareList renders each key's share of the values' total, largest first
// (ties by name), as whole percentages ("<1%" for a non-zero share that
// rounds to 0), leaving out zero values; "-" if the total is zero.
func shareList(values map[string]float64) string {
	type share struct {
		owner string
		s     float64
	}
	var shares []share
	for owner, v := range values {
		if v > 0 {
			shares = append(shares, share{owner, v})
		}
	}
	if len(shares) == 0 {
		return "-"
	}
	slices.SortFunc(shares, func(x, y share) int {
		return cmp.Or(cmp.Compare(y.s, x.s), cmp.Compare(x.owner, y.owner))
	})
	total := 0.0 // summed in sorted order: map order would change the rounding
	for _, sh := range shares {
		total += sh.s
	}
	parts := make([]string, len(shares))
	for i, sh := range shares {
		if pct := 100 * sh.s / total; pct < 0.5 {
			parts[i] = sh.owner + " <1%" // not "0%": it is there
		} else {
			parts[i] = fmt.Sprintf("%s %.0f%%", sh.owner, pct)
		}
	}
	return strings.Join(parts, ", ")
}
