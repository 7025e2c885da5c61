package results

import "slices"

// The instance roles, as InstanceInfo.Role spells them.
const (
	RoleColocated = "colocated" // prefill and decode on the same instance
	RolePrefill   = "prefill"   // runs prompts and ships their KV
	RoleDecode    = "decode"    // receives KV and generates the output
)

// InstanceInfo is one instance's end-of-run counters, as the simulator
// reports them. Times are ns of simulated time.
type InstanceInfo struct {
	Name, Pool string
	Role       string // RoleColocated, RolePrefill or RoleDecode
	Owner      string // who answers for its time; "" = its pool's name
	GPUs       int

	BusyNs        int64 // time spent inside steps
	PrefillBusyNs int64 // busy time attributed to prefill work, re-prefill included

	Preemptions     int64
	ReprefillTokens int64 // tokens recomputed after a preemption
	SwapOuts        int64 // preemptions that went to the host tier
	Rejections      int64 // sequences the instance refused
	Recompiles      int64 // wafer: recompile pauses

	Cascades       int   // preemption chains of depth ≥ 2
	LongestCascade int   // deepest chain
	CascadeNs      int64 // time inside cascades
	Lockups        int   // lock-up spells of every kind (LockSpells summed)
	LockupNs       int64 // time inside lock-ups
	// LockSpells and LockNs are its lock-up spells and their time by
	// kind (LockNames).
	LockSpells [NumLockKinds]int
	LockNs     [NumLockKinds]int64

	Waits [NumWaits]int64 // its queued requests' waits by cause (Wait*), summed

	// Speculative decoding: sequence steps that verified drafts, the
	// draft tokens verified and those accepted (SpecSummary).
	SpecDrafts, SpecDraftTokens, SpecAccepted int64
}

// owner returns who answers for the instance's time: Owner, or the pool's
// name when Owner is empty.
func (in *InstanceInfo) owner() string {
	if in.Owner == "" {
		return in.Pool
	}
	return in.Owner
}

// InstanceNames returns the instances' names in order, for
// WriteRequestsCSV. O(n).
func InstanceNames(insts []InstanceInfo) []string {
	names := make([]string, len(insts))
	for i := range insts {
		names[i] = insts[i].Name
	}
	return names
}

// InstanceSummary is one instance's line in summary.json. Times in s.
type InstanceSummary struct {
	Name            string  `json:"name"`
	Pool            string  `json:"pool"`
	Role            string  `json:"role"`
	Owner           string  `json:"owner"`
	GPUs            int     `json:"gpus"`
	BusyS           float64 `json:"busy_s"`
	PrefillShare    float64 `json:"prefill_share"` // prefill busy time / busy time (0 if never busy)
	Preemptions     int64   `json:"preemptions"`
	ReprefillTokens int64   `json:"reprefill_tokens"`
	Cascades        int     `json:"cascades"`
	LongestCascade  int     `json:"longest_cascade"`
	CascadeS        float64 `json:"cascade_s"`
	Lockups         int     `json:"lockups"`
	LockupS         float64 `json:"lockup_s"`
	// LockupKinds splits its lock-ups by kind (LockNames).
	LockupKinds map[string]LockupFigures `json:"lockup_kinds"`
	SwapOuts    int64                    `json:"swap_outs"`
	Rejections  int64                    `json:"rejections"`
	Recompiles  int64                    `json:"recompiles"`
	// WaitS is what requests waited in its queues for admission, by cause
	// (WaitNames), summed, s.
	WaitS map[string]float64 `json:"wait_s"`
}

// PreemptionSummary gathers preemption statistics over the decode
// instances (all instances in a colocated cluster): the KV pressure side of
// a disaggregated deployment. Rejections and WastedTokens come from the
// records and cover every request; the lock-up figures cover every
// instance, since a prefiller locks up too (pinned by KV its decoders do
// not pull).
type PreemptionSummary struct {
	Count               int64   `json:"count"`
	ReprefillTokens     int64   `json:"reprefill_tokens"`
	DecoderPrefillShare float64 `json:"decoder_prefill_share"` // Σ prefill busy / Σ busy (0 if never busy)
	Cascades            int     `json:"cascades"`
	LongestCascade      int     `json:"longest_cascade"`
	CascadeS            float64 `json:"cascade_s"`
	Lockups             int     `json:"lockups"` // every kind, every instance
	LockupS             float64 `json:"lockup_s"`
	// LockupKinds splits the lock-ups by kind (LockNames), and
	// LockupChains are the waits-for chains between instances they
	// formed, most time first.
	LockupKinds  map[string]LockupFigures `json:"lockup_kinds"`
	LockupChains []LockupChainSummary     `json:"lockup_chains"`
	SwapOuts     int64                    `json:"swap_outs"`
	Rejections   int64                    `json:"rejections"`    // Σ Record.Rejections
	WastedTokens int64                    `json:"wasted_tokens"` // Σ Record.WastedTokens
}

// any reports whether anything preemption-like happened (the decoder
// prefill share aside, which a colocated cluster always has).
func (p *PreemptionSummary) any() bool {
	return p.Count != 0 || p.ReprefillTokens != 0 || p.Cascades != 0 || p.Lockups != 0 ||
		p.SwapOuts != 0 || p.Rejections != 0 || p.WastedTokens != 0
}

// summarizeInstances returns one InstanceSummary per instance, in order;
// never nil, so the JSON holds [] rather than null. O(len(insts)).
func summarizeInstances(insts []InstanceInfo) []InstanceSummary {
	out := make([]InstanceSummary, len(insts))
	for i := range insts {
		in := &insts[i]
		out[i] = InstanceSummary{Name: in.Name, Pool: in.Pool, Role: in.Role, Owner: in.owner(), GPUs: in.GPUs,
			BusyS: nsToS(float64(in.BusyNs)), PrefillShare: ratio(in.PrefillBusyNs, in.BusyNs),
			Preemptions: in.Preemptions, ReprefillTokens: in.ReprefillTokens,
			Cascades: in.Cascades, LongestCascade: in.LongestCascade, CascadeS: nsToS(float64(in.CascadeNs)),
			Lockups: in.Lockups, LockupS: nsToS(float64(in.LockupNs)), LockupKinds: lockupKinds(in.LockSpells, in.LockNs),
			SwapOuts: in.SwapOuts, Rejections: in.Rejections, Recompiles: in.Recompiles, WaitS: waitMap(in.Waits)}
	}
	return out
}

// waitMap names waits by cause, in seconds.
func waitMap(ns [NumWaits]int64) map[string]float64 {
	m := make(map[string]float64, NumWaits)
	for k, v := range ns {
		m[WaitNames[k]] = nsToS(float64(v))
	}
	return m
}

// summarizePreemption sums the preemption counters of the decode instances,
// or of all instances when none has the decode role, the lock-ups of all
// instances and their chains, and the rejections and wasted tokens of all
// records. O(len(recs) + len(insts) + len(chains)).
func summarizePreemption(recs []Record, insts []InstanceInfo, chains []LockupChain) PreemptionSummary {
	decodeOnly := slices.ContainsFunc(insts, func(in InstanceInfo) bool { return in.Role == RoleDecode })
	var p PreemptionSummary
	var busyNs, prefillNs, cascadeNs, lockupNs int64
	var spells [NumLockKinds]int
	var spellNs [NumLockKinds]int64
	for i := range insts {
		in := &insts[i]
		p.Lockups += in.Lockups
		lockupNs += in.LockupNs
		for k := range spells {
			spells[k], spellNs[k] = spells[k]+in.LockSpells[k], spellNs[k]+in.LockNs[k]
		}
		if decodeOnly && in.Role != RoleDecode {
			continue
		}
		p.Count += in.Preemptions
		p.ReprefillTokens += in.ReprefillTokens
		p.Cascades += in.Cascades
		p.LongestCascade = max(p.LongestCascade, in.LongestCascade)
		p.SwapOuts += in.SwapOuts
		busyNs += in.BusyNs
		prefillNs += in.PrefillBusyNs
		cascadeNs += in.CascadeNs
	}
	p.DecoderPrefillShare = ratio(prefillNs, busyNs)
	p.CascadeS, p.LockupS = nsToS(float64(cascadeNs)), nsToS(float64(lockupNs))
	p.LockupKinds, p.LockupChains = lockupKinds(spells, spellNs), summarizeChains(chains)
	for i := range recs {
		p.Rejections += int64(recs[i].Rejections)
		p.WastedTokens += int64(recs[i].WastedTokens)
	}
	return p
}

// WaitSummary is why requests waited in the queues for admission, by
// cause, summed over the instances that prefill (prefill and colocated
// roles) and over those that only decode, in seconds: a planner reads
// "decode side: 80 % max_num_seqs" and knows whether a limit or memory is
// short. Re-prefills after a preemption are not included.
type WaitSummary struct {
	PrefillS map[string]float64 `json:"prefill_s"`
	DecodeS  map[string]float64 `json:"decode_s"`
}

// summarizeWaits adds the instances' waits up by side.
func summarizeWaits(insts []InstanceInfo) WaitSummary {
	var pre, dec [NumWaits]int64
	for i := range insts {
		side := &pre
		if insts[i].Role == RoleDecode {
			side = &dec
		}
		for k, v := range insts[i].Waits {
			side[k] += v
		}
	}
	return WaitSummary{PrefillS: waitMap(pre), DecodeS: waitMap(dec)}
}
