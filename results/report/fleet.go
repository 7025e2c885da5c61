package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/results"
	"handoff/results/rundir"
)

// scenario is what a report shows of an effective scenario.yaml: its
// text, and the model and pools for the fleet table.
type scenario struct {
	Text  string
	Model string `yaml:"model"`
	Pools []struct {
		Name     string `yaml:"name"`
		Role     string `yaml:"role"`
		Count    int    `yaml:"count"`
		Hardware string `yaml:"hardware"`
		TP       int    `yaml:"tp"`
	} `yaml:"pools"`
}

// readScenario reads the effective scenario.yaml of a run directory (or
// a sweep's point) through rundir; a missing file gives the zero scenario
// (older run directories may not have one).
func readScenario(dir string) (scenario, error) {
	var sc scenario
	b, err := rundir.ReadScenario(dir)
	if b == nil || err != nil {
		return sc, err
	}
	if err := yaml.Unmarshal(b, &sc); err != nil {
		path := filepath.Join(dir, results.ScenarioFile)
		return sc, fmt.Errorf("%s: %w", path, err)
	}
	sc.Text = string(b)
	return sc, nil
}

// scenarioSection names the scenario and lists the fleet: one row per
// pool, from the scenario's pools (hardware, TP) and the summary's
// instances (owner, GPUs).
func scenarioSection(s results.Summary, sc scenario) section {
	sec := section{ID: "scenario", Title: "Scenario and fleet", Def: definitions["scenario"],
		Facts: []fact{{"scenario", orDash(s.Scenario), Define("scenario_name")}, {"model", orDash(sc.Model), Define("model")},
			{"seed", fmt.Sprint(s.Seed), Define("seed")}, {capitalized(s.DeviceNoun()) + "s", fmt.Sprint(s.GPUs), Define("gpus")}},
		Pre: sc.Text, PreTitle: "scenario.yaml (the effective scenario, every default filled)"}
	sec.Tables = []table{fleetTable(s.Instances, sc)}
	return sec
}

// fleetTable has one row per pool, in the order its instances come.
func fleetTable(insts []results.InstanceSummary, sc scenario) table {
	t := table{ID: "fleet", Caption: "the fleet, one row per pool"}
	t.Head = heads("pool", "role", "owner", "count_pool", "gpus", "hardware_pool", "tp_pool")
	t.Head[3].Text, t.Head[5].Text, t.Head[6].Text = "instances", "hardware", "TP"
	type pool struct {
		in          results.InstanceSummary // the first instance
		count, gpus int64
	}
	var pools []pool
	index := map[string]int{}
	for _, in := range insts {
		k, ok := index[in.Pool]
		if !ok {
			k, index[in.Pool] = len(pools), len(pools)
			pools = append(pools, pool{in: in})
		}
		pools[k].count++
		pools[k].gpus += int64(in.GPUs)
	}
	for _, p := range pools {
		hw, tp := poolHardware(sc, p.in.Pool)
		t.Rows = append(t.Rows, []cell{textCell(p.in.Pool), textCell(p.in.Role), textCell(p.in.Owner), intCell(p.count),
			intCell(p.gpus), textCell(hw), textCell(tp)})
	}
	return t
}

// poolHardware returns the named pool's hardware and TP from the scenario,
// or "-" for each when the scenario does not say.
func poolHardware(sc scenario, pool string) (hw, tp string) {
	for _, p := range sc.Pools {
		if p.Name == pool {
			return orDash(p.Hardware), fmt.Sprint(max(p.TP, 1))
		}
	}
	return "-", "-"
}

// utilizationSection lists each instance's busy time and share of the
// run, with the timelines DrawDir draws (the instances with the most
// preemptions).
func utilizationSection(s results.Summary, timelines []figure) section {
	t := table{ID: "utilization", Caption: "per-instance utilization", Sortable: true,
		Head: heads("instance", "pool", "role", "gpus", "busy_s", "utilization", "prefill_share")}
	for _, in := range s.Instances {
		util := 0.0
		if s.SimTimeS > 0 {
			util = in.BusyS / s.SimTimeS
		}
		t.Rows = append(t.Rows, []cell{textCell(in.Name), textCell(in.Pool), textCell(in.Role), intCell(int64(in.GPUs)),
			fixedCell(in.BusyS, 3), percentCell(util), percentCell(in.PrefillShare)})
	}
	return section{ID: "utilization", Title: "Per-instance utilization", Def: definitions["utilization"],
		Tables: []table{t}, Figures: timelines}
}

// percentCell shows a share as a percentage, sorting by the share.
func percentCell(share float64) cell {
	c := numCell(share, 0)
	c.Text = results.Percent(share)
	return c
}

// preemptionSection holds the preemption summary and one row per
// instance of its preemption, cascade and lock-up counters.
func preemptionSection(s results.Summary) section {
	p := s.Preemption
	sec := section{ID: "preemption", Title: "Preemption and cascades", Def: definitions["count"]}
	sec.Facts = []fact{
		{"preemptions", fmt.Sprint(p.Count), Define("count")},
		{"re-prefilled tokens", fmt.Sprint(p.ReprefillTokens), Define("reprefill_tokens")},
		{"decoder prefill share", results.Percent(p.DecoderPrefillShare), Define("decoder_prefill_share")},
		{"cascades", fmt.Sprint(p.Cascades), Define("cascades")},
		{"longest cascade", fmt.Sprint(p.LongestCascade), Define("longest_cascade")},
		{"time in cascades", fmt.Sprintf("%.3f s", p.CascadeS), Define("cascade_s")},
		{"lock-ups", fmt.Sprint(p.Lockups), Define("lockups")},
		{"time locked up", fmt.Sprintf("%.3f s", p.LockupS), Define("lockup_s")},
		{"swap-outs", fmt.Sprint(p.SwapOuts), Define("swap_outs")},
		{"rejections", fmt.Sprint(p.Rejections), Define("rejections")},
		{"wasted tokens", fmt.Sprint(p.WastedTokens), Define("wasted_tokens")},
	}
	t := table{ID: "cascades", Caption: "per instance", Sortable: true,
		Head: heads("instance", "preemptions", "reprefill_tokens", "cascades", "longest_cascade", "cascade_s",
			"lockups", "lockup_s", "swap_outs", "rejections")}
	for _, in := range s.Instances {
		t.Rows = append(t.Rows, []cell{textCell(in.Name), intCell(in.Preemptions), intCell(in.ReprefillTokens),
			intCell(int64(in.Cascades)), intCell(int64(in.LongestCascade)), fixedCell(in.CascadeS, 3),
			intCell(int64(in.Lockups)), fixedCell(in.LockupS, 3), intCell(in.SwapOuts), intCell(in.Rejections)})
	}
	t.Head[1].Def = Define("instance_preemptions")
	sec.Tables = []table{t}
	return sec
}

// tierSection lists the lower KV tiers.
func tierSection(tiers []results.TierSummary) section {
	t := table{ID: "tiers", Caption: "lower KV tiers",
		Head: heads("tier", "tier_hit_rate", "read_bytes", "written_bytes", "capacity", "cached_blocks")}
	t.Head[1].Text = "hit rate"
	for _, tr := range tiers {
		t.Rows = append(t.Rows, []cell{textCell(tr.Name), percentCell(tr.HitRate), numCell(tr.ReadBytes, 0),
			numCell(tr.WrittenBytes, 0), intCell(tr.CapacityBlocks), intCell(tr.CachedBlocks)})
	}
	return section{ID: "tiers", Title: "KV tiers", Def: definitions["kv_tiers"], Tables: []table{t}}
}

// changingFleetSection reports a fleet that changed over the run, its
// devices called noun: its bill, scale-ups and faults, one row per pool, and the plot of each
// pool's instances over time (fleet.csv) when there is one.
func changingFleetSection(f *results.FleetSummary, noun string, plots []figure) section {
	sec := section{ID: "fleet", Title: "Fleet", Def: definitions["fleet_changes"], Figures: plots}
	sec.Facts = []fact{
		{noun + "-hours", fmt.Sprintf("%.3f", f.GPUHours), Define("gpu_hours")},
		{"cost", fmt.Sprintf("$%.2f", f.CostUSD), Define("cost_usd")},
		{"scale-ups", fmt.Sprint(f.ScaleUps), Define("scale_ups")},
	}
	if f.ScaleUps > 0 {
		sec.Facts = append(sec.Facts, fact{"scale-up time", fmt.Sprintf("p50 %.3g s, max %.3g s", f.ScaleUpS.P50, f.ScaleUpS.Max),
			Define("scale_up_s")})
	}
	sec.Facts = append(sec.Facts,
		fact{"crashes", fmt.Sprint(f.Crashes), Define("crashes")},
		fact{"failed over", fmt.Sprint(f.FailedOver), Define("failed_over")})
	if f.FailedOver > 0 {
		sec.Facts = append(sec.Facts, fact{"fail-over stall", fmt.Sprintf("p50 %.3g s, max %.3g s", f.FailoverStallS.P50,
			f.FailoverStallS.Max), Define("failover_stall_s")})
	}
	sec.Facts = append(sec.Facts, fact{"lost", fmt.Sprint(f.Lost), Define("lost")})
	if len(f.AttainmentPerHour) > 1 {
		hours := make([]string, len(f.AttainmentPerHour))
		for h, a := range f.AttainmentPerHour {
			hours[h] = fmt.Sprintf("hour %d: %s", h, results.Percent(a))
		}
		sec.Facts = append(sec.Facts, fact{"attainment per hour", strings.Join(hours, ", "), Define("slo_attainment_per_hour")})
	}
	t := table{ID: "fleet-pools", Caption: "per pool over the run",
		Head: heads("pool", "gpu_hours", "cost_usd", "min_ready", "max_ready", "changes")}
	for _, p := range f.Pools {
		t.Rows = append(t.Rows, []cell{textCell(p.Pool), fixedCell(p.GPUHours, 3), fixedCell(p.CostUSD, 2),
			intCell(int64(p.MinReady)), intCell(int64(p.MaxReady)), intCell(int64(p.ChangeCount))})
	}
	sec.Tables = []table{t}
	return sec
}

// capitalized returns s with its first letter in upper case ("wafer" →
// "Wafer"), for a label that starts a line.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
