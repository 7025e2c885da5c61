package docspec

import (
	"encoding/json"
	"strings"
	"testing"
)

const summary = `{"requests": {"completed": 4937, "rejected": 149},
 "ttft_s": {"p50": 0.4059, "p99": 5.004},
 "preemption": {"rejections": 6315, "wasted_tokens": 144644, "reprefill_tokens": 3319268},
 "instances": [{"recompiles": 1, "role": "decode"}, {"recompiles": 0, "role": "prefill"}, {"recompiles": 2, "role": "decode"}],
 "network": {"wan_bytes": 8984000000000},
 "scenario": "s",
 "attribution": {"by_owner": {"nvidia": {"ttft_s": 0.94}, "nobody": {"ttft_s": 0.06}, "cerebras": {"ttft_s": 0}}}}`

func TestSummaryCells(t *testing.T) {
	var sum map[string]any
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		t.Fatal(err)
	}
	d := &RowData{Summary: sum}
	for _, tc := range []struct {
		value        []string
		unit, format string
		want         string
	}{
		{[]string{"ttft_s.p50"}, "ms", "%.0f", "406"},
		{[]string{"ttft_s.p99"}, "", "%.2f", "5.00"},
		{[]string{"requests.completed", "requests.rejected"}, "", "%d / %d", "4937 / 149"},
		{[]string{"preemption.rejections", "preemption.wasted_tokens"}, "", "%d (%,d)", "6315 (144,644)"},
		{[]string{"preemption.reprefill_tokens"}, "", "%,d", "3,319,268"},
		{[]string{"network.wan_bytes"}, "TB", "%.2f TB", "8.98 TB"},
		{[]string{"sum(instances.recompiles)"}, "", "%d", "3"},
		{[]string{"sum(instances[role=decode].recompiles)"}, "", "%d", "3"},
		{[]string{"sum(instances[role=prefill].recompiles)"}, "", "%d", "0"},
		{[]string{"sum(instances[role=wafer].recompiles)"}, "", "%d", "0"},
		{[]string{"owners(ttft_s)"}, "", "%s", "nvidia 94%, nobody 6%, cerebras 0%"},
		{[]string{"scenario"}, "", "%s", "s"},
		{[]string{"requests.completed / 2"}, "", "%.1f", "2468.5"},
		{[]string{"ttft_s.p50"}, "%", "%.1f%%", "40.6%"},
	} {
		vals := make([]value, len(tc.value))
		for i, e := range tc.value {
			v, err := d.eval(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			vals[i] = v
		}
		got, err := formatCell(tc.format, tc.unit, vals)
		if err != nil || got != tc.want {
			t.Errorf("%v %s %q: %q (%v), want %q", tc.value, tc.unit, tc.format, got, err, tc.want)
		}
	}
}

func TestSummaryErrors(t *testing.T) {
	var sum map[string]any
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		t.Fatal(err)
	}
	d := &RowData{Summary: sum}
	for _, tc := range []struct{ value, format, want string }{
		{"ttft_s.p95", "%.2f", "no single ttft_s.p95"},
		{"instances.recompiles", "%d", "no single instances.recompiles"},
		{"sum(scenario)", "%d", "is not a number"},
		{"median(ttft_s)", "%d", "want sum(path) or owners(part)"},
		{"ttft_s.p50", "%s", "%s for 0.4059"},
		{"scenario", "%d", `%d for "s"`},
		{"ttft_s.p50", "%.1f %.1f", "more verbs than the 1 values"},
		{"ttft_s.p50", "%q", "unknown verb %q"},
		{"ttft_s.p50", "%.1", "verb at its end"},
	} {
		v, err := d.eval(tc.value)
		if err == nil {
			_, err = formatCell(tc.format, "", []value{v})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: error %v, want %q", tc.value, tc.format, err, tc.want)
		}
	}
	if _, err := formatCell("%d", "", []value{number(1), number(2)}); err == nil || !strings.Contains(err.Error(), "1 verbs for 2 values") {
		t.Errorf("two values for one verb: error %v", err)
	}
	if _, err := formatCell("%d", "s²", []value{number(1)}); err == nil || !strings.Contains(err.Error(), "unknown unit") {
		t.Errorf("unit s²: error %v", err)
	}
}

// sweep is a row's results.csv records, by rate.
var sweep = []map[string]string{
	{"rate": "2", "attainment": "0.95", "hit": "0.05", "gpus": "8", "meets": "true"},
	{"rate": "3", "attainment": "0.91", "hit": "0.07", "gpus": "8", "meets": "true"},
	{"rate": "3.5", "attainment": "0.85", "hit": "0.06", "gpus": "8", "meets": "false"},
	{"rate": "4", "attainment": "0.92", "hit": "0.04", "gpus": "8", "meets": "true"},
}

func TestCSVCells(t *testing.T) {
	d := &RowData{Records: sweep, Sources: map[string][]map[string]string{"plan": {{"cost": "36"}}}}
	for _, tc := range []struct {
		value        []string
		unit, format string
		want         string
	}{
		{[]string{"last(rate, attainment>=0.9)"}, "", "%g", "3"},
		{[]string{"next(attainment, attainment>=0.9)"}, "%", "%.1f%%", "85.0%"},
		{[]string{"last(rate, meets)", "next(rate, meets)"}, "", "%g then %g", "3 then 3.5"},
		{[]string{"next(rate, attainment>0)"}, "", "%g", "—"},
		{[]string{"last(rate, attainment>0.99)"}, "", "%g", "—"},
		{[]string{"at(attainment, rate=3.5)"}, "%", "%.1f%%", "85.0%"},
		{[]string{"min(hit)", "max(hit)"}, "%", "%.1f–%.1f%%", "4.0–7.0%"},
		{[]string{"one(gpus)"}, "", "%d", "8"},
		{[]string{"gpus"}, "", "%d", "8"},
		{[]string{"plan:one(cost)"}, "", "%.2f", "36.00"},
		{[]string{"last(rate, meets) / one(gpus)"}, "", "%.4g", "0.375"},
		{[]string{"last(rate, meets) / last(attainment, meets)", "last(rate, meets)", "last(attainment, meets)"}, "", "rate_scale_attainment", "3.3 req/s (×3, 91.0%)"},
		{[]string{"1", "2", "1"}, "", "rate_scale_attainment", "1 req/s (×2)"},
	} {
		vals := make([]value, len(tc.value))
		for i, e := range tc.value {
			v, err := d.eval(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			vals[i] = v
		}
		got, err := formatCell(tc.format, tc.unit, vals)
		if err != nil || got != tc.want {
			t.Errorf("%v %q: %q (%v), want %q", tc.value, tc.format, got, err, tc.want)
		}
	}
}

func TestCSVErrors(t *testing.T) {
	d := &RowData{Records: sweep}
	for _, tc := range []struct{ value, want string }{
		{"one(hit)", "hit differs between the row's records"},
		{"at(hit, rate=5)", "no record has rate=5"},
		{"at(hit, 5)", "want column=value"},
		{"last(rate, nope)", `condition "nope": no such column`},
		{"last(rate, meets>=1)", "want a numeric column and a number"},
		{"max(nope)", "is not a number"},
		{"mean(hit)", "no such function"},
		{"one()", "want a column"},
		{"plan:one(cost)", `no source "plan"`},
	} {
		if _, err := d.eval(tc.value); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.value, err, tc.want)
		}
	}
}

func TestRenderSelectJoin(t *testing.T) {
	recs := append([]map[string]string{}, sweep[3], sweep[0], sweep[2], sweep[1])
	for _, r := range recs {
		r["hw"] = "h100"
	}
	s := &Spec{File: "results.csv", Order: "rate", Labels: []string{"hw"}, Columns: []Column{
		{Head: "highest", Value: Exprs{"last(rate, meets)"}, Format: "%g"},
		{Head: "after", Value: Exprs{"next(attainment, meets)"}, Unit: "%", Format: "%.1f%%"},
	}}
	row := Row{Cells: []string{"h100"}, Where: map[string]string{"hw": "h100"}, Bold: []int{2}}
	sel, err := s.Select(row, recs)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := s.Render([]Row{row}, []RowData{{Records: sel}})
	want := "| hw | highest | after |\n|---|---|---|\n| h100 | **3** | 85.0% |"
	if err != nil || strings.Join(lines, "\n") != want {
		t.Errorf("table (%v):\n%s\nwant\n%s", err, strings.Join(lines, "\n"), want)
	}
	if _, err := s.Select(Row{Where: map[string]string{"hw": "b200"}}, recs); err == nil {
		t.Error("a where no record matches selected records")
	}
	src := Source{File: "plan.csv", On: map[string]string{"decode_hardware": "hw"}}
	joined, err := src.Join(row, []map[string]string{{"decode_hardware": "h200"}, {"decode_hardware": "h100", "cost": "36"}})
	if err != nil || len(joined) != 1 || joined[0]["cost"] != "36" {
		t.Errorf("join: %v, %v", joined, err)
	}
	if _, err := src.Join(Row{Where: map[string]string{}}, nil); err == nil {
		t.Error("a join on a where key the row lacks passed")
	}
}
