package results

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Lock-ups: spells in which an instance makes no progress and its own
// scheduling cannot change that, by kind, and the chains of instances
// waiting for one another that they form. The simulator detects them
// (sim/lockup.go states each rule); here they are summed and reported.

// The lock-up kinds, indexes into LockNames and the per-kind figures.
const (
	LockDeadlock       = iota // queued work, nothing running, no step it can start, and nothing on its way to let it
	LockPreemptionLoop        // busy, preempting or recovering victims, without a normal decode token
	LockPinned                // a prefiller that cannot start a step because its pool holds KV decoders have not pulled
	NumLockKinds
)

// LockNames are the lock-up kinds' names in reports, indexed by kind.
var LockNames = [NumLockKinds]string{"deadlock", "preemption_loop", "pinned"}

// LockupChain is a waits-for chain between instances that lock-up spells
// formed — a pinned prefiller waiting for the decoder that holds most of
// its unpulled KV, and so on while the one waited for was itself locked
// up — summed over the spells that formed it. Times are ns.
type LockupChain struct {
	Chain     string   // e.g. "prefill-0 pinned → decode-1 (own kv_blocks)"
	Instances []string // the locked instance first, then each one the one before waited for
	Cycle     bool     // the last waited for one already on the chain
	Spells    int
	Ns        int64 // Σ the spells' lengths
	FirstNs   int64 // the first spell's start
	LongestNs int64
	// LongestFromNs is the longest spell's start, and Example its chain
	// then, with when each locked instance on it began its lock-up.
	LongestFromNs int64
	Example       string
}

// LockupFigures are the spells of one lock-up kind and their time, s.
type LockupFigures struct {
	Spells int     `json:"spells"`
	S      float64 `json:"s"`
}

// LockupChainSummary is a LockupChain in summary.json. Times in s.
type LockupChainSummary struct {
	Chain        string   `json:"chain"`
	Instances    []string `json:"instances"`
	Cycle        bool     `json:"cycle"`
	Spells       int      `json:"spells"`
	S            float64  `json:"s"`
	FirstS       float64  `json:"first_s"`
	LongestS     float64  `json:"longest_s"`
	LongestFromS float64  `json:"longest_from_s"`
	Example      string   `json:"example"`
}

// lockupKinds names spells and ns by kind, in seconds; every kind is
// present, so the keys do not come and go with the run.
func lockupKinds(spells [NumLockKinds]int, ns [NumLockKinds]int64) map[string]LockupFigures {
	m := make(map[string]LockupFigures, NumLockKinds)
	for k, name := range LockNames {
		m[name] = LockupFigures{Spells: spells[k], S: nsToS(float64(ns[k]))}
	}
	return m
}

// summarizeChains converts chains for summary.json, most time first;
// never nil, so the JSON holds [] rather than null.
func summarizeChains(chains []LockupChain) []LockupChainSummary {
	out := make([]LockupChainSummary, len(chains))
	for i, ch := range chains {
		out[i] = LockupChainSummary{Chain: ch.Chain, Instances: ch.Instances, Cycle: ch.Cycle, Spells: ch.Spells,
			S: nsToS(float64(ch.Ns)), FirstS: nsToS(float64(ch.FirstNs)), LongestS: nsToS(float64(ch.LongestNs)),
			LongestFromS: nsToS(float64(ch.LongestFromNs)), Example: ch.Example}
	}
	slices.SortStableFunc(out, func(a, b LockupChainSummary) int {
		return cmp.Or(cmp.Compare(b.S, a.S), cmp.Compare(a.Chain, b.Chain))
	})
	return out
}

// maxChainsPrinted bounds the chains the summary table lists on its line.
const maxChainsPrinted = 2

// writeLockups writes the lock-up line — each kind that occurred with its
// spells, time and the instance with the most of it, then the chains with
// the most time — or nothing when no instance locked up.
func writeLockups(b *bytes.Buffer, p PreemptionSummary, insts []InstanceSummary) {
	if p.Lockups == 0 {
		return
	}
	var parts []string
	for _, name := range LockNames {
		if f := p.LockupKinds[name]; f.Spells > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.2f s, most on %s)", name, f.Spells, f.S, mostOn(insts, name)))
		}
	}
	for i, ch := range p.LockupChains {
		if i == maxChainsPrinted {
			parts = append(parts, fmt.Sprintf("+%d more chains", len(p.LockupChains)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d (%.2f s, longest %.2f s from %.3f s)",
			ch.Chain, ch.Spells, ch.S, ch.LongestS, ch.LongestFromS))
	}
	fmt.Fprintf(b, "%-11s %s\n", "lock-ups", strings.Join(parts, "   "))
}

// mostOn names the instance with the most time locked up in kind name.
func mostOn(insts []InstanceSummary, name string) string {
	best := -1
	for i := range insts {
		if s := insts[i].LockupKinds[name].S; s > 0 && (best < 0 || s > insts[best].LockupKinds[name].S) {
			best = i
		}
	}
	if best < 0 {
		return "-"
	}
	return insts[best].Name
}
