package experiment

import (
	"fmt"
	"io"
	"time"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/workload"
	"handoff/sim"
	"handoff/sim/parallel"
)

// Run builds a loaded scenario, applies each configure function to the
// built configuration (a tracer, a timeline, a RunDir's requests.csv,
// KeepRecords), simulates it and summarises the run: from the records
// streamed as requests end (stream.go; Result.Records is then nil), or
// from every record with KeepRecords. The scenario's warnings (deprecated fields) go to warn, one
// line each (nil: dropped); what the run changed of its trace (0-token prompts and outputs served
// as 1 token) goes to the summary's Warnings. A workload with no requests is an error: a
// summary of nothing would read as a cluster that served nothing.
func Run(l *scenarios.Loaded, warn io.Writer, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
	return RunOn(l, warn, 1, configure...)
}

// RunOn is Run on cores cores (package sim/parallel): with more than one,
// the workload is read ahead and the records consumed beside the event
// loop, and every output is the same byte for byte as on one. What must
// run in step with the loop all the same is said once on warn, as a note.
func RunOn(l *scenarios.Loaded, warn io.Writer, cores int, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
	b, err := l.Build()
	if err != nil {
		return results.Summary{}, nil, err
	}
	defer b.Close()
	if warn != nil {
		for _, w := range b.Warnings {
			fmt.Fprintln(warn, "warning:", w)
		}
	}
	for _, f := range configure {
		f(b.Config)
	}
	var t *tally
	if keeps(b.Config) {
		b.Config.Records = nil
	} else {
		t = newTally(b.Config.SLO, b.Config.Records)
		t.sum.SetClasses(b.Classes)
		if src, ok := b.Config.Source.(sim.Counted); ok {
			t.sum.Expect(int64(src.MaxRequests()))
		}
		b.Config.Records = t
	}
	var note func(string)
	if warn != nil {
		note = func(s string) { fmt.Fprintln(warn, "note:", s) }
	}
	start := time.Now()
	res, err := parallel.Run(b.Config, cores, note) // the tally has every record when it returns
	if err != nil {
		return results.Summary{}, nil, err
	}
	if res.Requests == 0 {
		return results.Summary{}, nil, fmt.Errorf("%s: the workload has no requests: there is nothing to measure", WorkloadName(l))
	}
	info := runInfo(l, b, res, time.Since(start).Seconds())
	var sum results.Summary
	if t == nil {
		sum = results.Summarize(res.Records, res.ITL, info)
	} else {
		sum = t.sum.Summary(res.ITL, info)
		t.sum, t.next = nil, nil // what Unserved and LimitShares need stays
	}
	sum.Warnings = append(workload.ClampedCount(b.Config.Source).Warnings(), sum.Warnings...)
	return sum, res, nil
}

// WorkloadName names the request source in errors: the trace file, or the
// scenario file for a generated workload.
func WorkloadName(l *scenarios.Loaded) string {
	if t := l.Workload.Trace; t != nil {
		return l.Resolve(t.Path)
	}
	return l.File
}

// InstanceNames returns a run's instance names, which requests.csv uses.
func InstanceNames(res *sim.Result) []string {
	names := make([]string, len(res.Instances))
	for i, in := range res.Instances {
		names[i] = in.Name
	}
	return names
}

// runInfo is what the summary needs of the run besides its records.
func runInfo(l *scenarios.Loaded, b *scenarios.Built, res *sim.Result, wallS float64) results.RunInfo {
	return results.RunInfo{Scenario: l.Name, Seed: l.Seed, GPUs: b.GPUs, Device: b.Device, SimTimeNs: res.SimTimeNs,
		WallTimeS: wallS, Events: res.Events, SLO: b.Config.SLO, Classes: b.Classes, Instances: instanceInfos(res),
		TransferOwner: b.TransferOwner, RouterOwner: b.RouterOwner, Links: linkInfos(res), Tiers: tierInfos(res),
		Fleet: scenarios.FleetInfo(l, b, res), LockupChains: res.LockupChains}
}

// tierInfos copies the run's lower-tier totals for the summary.
func tierInfos(res *sim.Result) []results.TierInfo {
	var infos []results.TierInfo
	for _, t := range res.Tiers {
		infos = append(infos, results.TierInfo{Name: t.Name, ReadBytes: t.ReadBytes, WrittenBytes: t.WrittenBytes,
			CapacityBlocks: t.CapacityBlocks, CachedBlocks: t.CachedBlocks})
	}
	return infos
}

// linkInfos copies the run's link counters for the summary.
func linkInfos(res *sim.Result) []results.LinkInfo {
	infos := make([]results.LinkInfo, len(res.Links))
	for i, l := range res.Links {
		infos[i] = results.LinkInfo{Name: l.Name, Bytes: l.Stats.Bytes, BusyNs: l.Stats.BusyNs, Transfers: l.Stats.Transfers}
	}
	return infos
}

// instanceInfos copies the simulator's per-instance counters into the
// results package's terms.
func instanceInfos(res *sim.Result) []results.InstanceInfo {
	infos := make([]results.InstanceInfo, len(res.Instances))
	for i, in := range res.Instances {
		infos[i] = results.InstanceInfo{Name: in.Name, Pool: in.Pool, Role: in.Role.String(), Owner: in.Owner,
			GPUs: in.GPUs, BusyNs: in.BusyNs, PrefillBusyNs: in.PrefillBusyNs,
			Preemptions: in.Stats.Preemptions, ReprefillTokens: in.Stats.ReprefillTokens,
			SwapOuts: in.Stats.SwapOuts, Rejections: in.Stats.Rejections, Recompiles: in.Stats.Recompiles,
			Cascades: in.Cascades, LongestCascade: in.LongestCascade, CascadeNs: in.CascadeNs,
			Lockups: in.Lockups, LockupNs: in.LockupNs, LockSpells: in.LockSpells, LockNs: in.LockNs,
			Waits: in.Stats.Waits, SpecDrafts: in.Stats.Spec.Drafts, SpecDraftTokens: in.Stats.Spec.DraftTokens,
			SpecAccepted: in.Stats.Spec.Accepted}
	}
	return infos
}
