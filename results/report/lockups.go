package report

import (
	"fmt"

	"handoff/results"
)

// lockupSection reports a run's lock-ups: each kind's spells and time,
// one row per instance that locked up, and the waits-for chains between
// instances, most time first.
func lockupSection(s results.Summary) section {
	p := s.Preemption
	sec := section{ID: "lockups", Title: "Lock-ups", Def: definitions["lockup_kinds"]}
	for _, name := range results.LockNames {
		f := p.LockupKinds[name]
		sec.Facts = append(sec.Facts, fact{name, fmt.Sprintf("%d spells, %.3f s", f.Spells, f.S), Define(name)})
	}
	insts := table{ID: "lockup-instances", Caption: "per instance", Sortable: true,
		Head: heads(append([]string{"instance", "role"}, results.LockNames[:]...)...)}
	for _, in := range s.Instances {
		if in.Lockups == 0 {
			continue
		}
		row := []cell{textCell(in.Name), textCell(in.Role)}
		for _, name := range results.LockNames {
			f := in.LockupKinds[name]
			c := fixedCell(f.S, 3)
			c.Text = fmt.Sprintf("%d (%.3f s)", f.Spells, f.S)
			row = append(row, c)
		}
		insts.Rows = append(insts.Rows, row)
	}
	sec.Tables = []table{insts}
	if len(p.LockupChains) > 0 {
		sec.Tables = append(sec.Tables, chainTable(p.LockupChains))
	}
	return sec
}

// chainTable lists the waits-for chains: which instance waited for which,
// in how many spells and how long, since when, and the longest.
func chainTable(chains []results.LockupChainSummary) table {
	t := table{ID: "lockup-chains", Caption: "waits-for chains", Sortable: true,
		Head: heads("lockup_chain", "chain_spells", "chain_s", "chain_first_s", "chain_longest_s",
			"chain_longest_from_s", "chain_example")}
	for i, text := range []string{"chain", "spells", "s", "first from (s)", "longest (s)", "longest from (s)", "longest, as it was"} {
		t.Head[i].Text = text
	}
	for _, ch := range chains {
		t.Rows = append(t.Rows, []cell{textCell(ch.Chain), intCell(int64(ch.Spells)), fixedCell(ch.S, 3),
			fixedCell(ch.FirstS, 3), fixedCell(ch.LongestS, 3), fixedCell(ch.LongestFromS, 3), textCell(ch.Example)})
	}
	return t
}
