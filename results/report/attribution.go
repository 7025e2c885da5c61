package report

import (
	"cmp"
	"slices"

	"handoff/results"
)

// attributionSection shows where the mean completed request's time goes:
// by component (TTFT's in ms, decode's in s) and by owner, with the two
// attribution plots.
func attributionSection(a results.Attribution, w results.WaitSummary, figs []figure) section {
	return section{ID: "attribution", Title: "Where the time goes", Def: definitions["attribution"],
		Tables: []table{componentTable(a), ownerTable(a), waitTable(w)}, Figures: figs}
}

// waitTable says why requests waited for admission: one row per cause,
// its seconds and share on the prefill side and on the decode side.
func waitTable(w results.WaitSummary) table {
	t := table{ID: "waits", Caption: "why requests waited for admission, summed over each side's instances",
		Head: heads("wait_cause", "wait_prefill_s", "wait_prefill_share", "wait_decode_s", "wait_decode_share")}
	t.Head[0].Text, t.Head[1].Text, t.Head[2].Text = "cause", "prefill side s", "share"
	t.Head[3].Text, t.Head[4].Text = "decode side s", "share"
	pre, dec := sum(w.PrefillS), sum(w.DecodeS)
	for _, name := range results.WaitNames {
		t.Rows = append(t.Rows, []cell{{Text: name, Def: definitions["wait_"+name]}, fixedCell(w.PrefillS[name], 3),
			percentCell(share(w.PrefillS[name], pre)), fixedCell(w.DecodeS[name], 3), percentCell(share(w.DecodeS[name], dec))})
	}
	return t
}

// componentTable has one row per time component, in results.TimeNames'
// order, with its share of TTFT or of the decode time.
func componentTable(a results.Attribution) table {
	t := table{ID: "components", Caption: "by component, mean per completed request",
		Head: heads("component", "part_of", "component_ms", "component_share")}
	t.Head[1].Text, t.Head[2].Text, t.Head[3].Text = "part of", "mean ms", "share"
	ttft, decode := sum(a.TTFTS), sum(a.DecodeS)
	for k, name := range results.TimeNames {
		part, v, total := "TTFT", a.TTFTS[name], ttft
		if k >= results.FirstDecodeTime {
			part, v, total = "decode", a.DecodeS[name], decode
		}
		t.Rows = append(t.Rows, []cell{{Text: name, Def: definitions[name]}, textCell(part), fixedCell(1e3*v, 3),
			percentCell(share(v, total))})
	}
	return t
}

// ownerTable has one row per owner, most time first (then by name).
func ownerTable(a results.Attribution) table {
	t := table{ID: "owners", Caption: "by owner, mean per completed request", Sortable: true,
		Head: heads("owner", "owner_ttft_s", "owner_decode_s", "owner_total_s", "share")}
	t.Head[1].Text, t.Head[2].Text, t.Head[3].Text = "TTFT ms", "decode s", "total s"
	owners := make([]string, 0, len(a.ByOwner))
	totals := map[string]float64{}
	for o, ot := range a.ByOwner {
		owners = append(owners, o)
		totals[o] = ot.TotalS
	}
	slices.SortFunc(owners, func(x, y string) int {
		return cmp.Or(cmp.Compare(a.ByOwner[y].TotalS, a.ByOwner[x].TotalS), cmp.Compare(x, y))
	})
	total := sum(totals)
	for _, o := range owners {
		ot := a.ByOwner[o]
		t.Rows = append(t.Rows, []cell{textCell(o), fixedCell(1e3*ot.TTFTS, 3), fixedCell(ot.DecodeS, 3),
			fixedCell(ot.TotalS, 3), percentCell(share(ot.TotalS, total))})
	}
	return t
}

// sum adds up a map's values in a fixed order (sorted keys), so the
// result does not depend on map iteration.
func sum(m map[string]float64) float64 {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var s float64
	for _, k := range keys {
		s += m[k]
	}
	return s
}

// share is part / whole, 0 when whole is not positive.
func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole
}
