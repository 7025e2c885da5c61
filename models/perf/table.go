package perf

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ProfileTable prices steps by interpolating measured step times over a
// (batch, tokens-per-sequence) grid, as profiled by Splitwise.
//
//   - Prefill: prompt_time over (batch = PrefillSeqs, prompt =
//     PrefillTokens/PrefillSeqs).
//   - Decode: token_time over (batch = DecodeSeqs, prompt =
//     DecodeContext/DecodeSeqs): a sequence's mean context stands in for
//     the profile's prompt_size, the context its decode steps start from.
//   - Mixed steps: prefill time + decode time, nothing subtracted (the
//     profile cannot tell how much fixed cost the two would share, so a
//     mixed step is priced as two steps run back to back; this
//     over-charges it by about one step overhead).
//   - An empty batch costs 0.
//
// Interpolation is bilinear in the grid's linear coordinates. Beyond the
// largest measured batch or prompt it extrapolates linearly from the last
// two grid lines; below the smallest it clamps to the edge (a smaller step
// is not assumed cheaper than the smallest one measured). Results are
// floored at zero.
//
// Grid completion: profiles such as Splitwise's are a cross, not a full
// grid (batch sweeps at one prompt size, prompt sweeps at batch 1). A
// missing cell (b, p) is filled multiplicatively from a measured pivot
// (b', p'): T(b, p) = T(b, p')·T(b', p)/T(b', p'), choosing the pivot
// nearest in log distance. This assumes batch and prompt effects are
// separable; for prefill, whose time is nearly a function of total tokens
// plus a fixed cost, it underestimates large cells (about 20% at batch 8,
// prompt 4096 in Splitwise's H100 data, judging by total-token scaling).
//
// StepNs is O(log grid) and does not allocate.
type ProfileTable struct {
	batches []float64 // sorted distinct batch sizes
	prompts []float64 // sorted distinct prompt sizes, tokens
	prefill []float64 // ms, len(batches)·len(prompts), row-major by batch
	decode  []float64 // ms, same layout
}

// NewProfileTable builds a table from the rows for model, hardware and tp.
// Repeated measurements of one (batch, prompt) are averaged, whatever their
// token_size. It returns an error listing the (model, hardware, tp) groups
// that exist when none match, and one naming the cell when the grid cannot
// be completed (a cell with neither a measured row nor column through it).
// Cost: O(rows + cells·measured cells).
func NewProfileTable(rows []ProfileRow, model, hardware string, tp int) (*ProfileTable, error) {
	type acc struct{ n, p, d float64 }
	cells := map[[2]int]*acc{}
	for _, r := range rows {
		if r.Model != model || r.Hardware != hardware || r.TP != tp {
			continue
		}
		k := [2]int{r.BatchSize, r.PromptSize}
		a := cells[k]
		if a == nil {
			a = &acc{}
			cells[k] = a
		}
		a.n++
		a.p += r.PromptTimeMs
		a.d += r.TokenTimeMs
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("perf: profile has no rows for model %q hardware %q tp %d (have %s)",
			model, hardware, tp, profileGroups(rows))
	}
	t := &ProfileTable{}
	for k := range cells {
		t.batches = append(t.batches, float64(k[0]))
		t.prompts = append(t.prompts, float64(k[1]))
	}
	t.batches, t.prompts = uniqueSorted(t.batches), uniqueSorted(t.prompts)
	n := len(t.batches) * len(t.prompts)
	t.prefill, t.decode = make([]float64, n), make([]float64, n)
	measured := make([]bool, n)
	for k, a := range cells {
		i := t.cell(sort.SearchFloat64s(t.batches, float64(k[0])), sort.SearchFloat64s(t.prompts, float64(k[1])))
		t.prefill[i], t.decode[i], measured[i] = a.p/a.n, a.d/a.n, true
	}
	return t, t.complete(measured)
}

// cell is the flat index of grid cell (batch index i, prompt index j).
func (t *ProfileTable) cell(i, j int) int { return i*len(t.prompts) + j }

// complete fills unmeasured cells from pivots (see ProfileTable).
func (t *ProfileTable) complete(measured []bool) error {
	for i := range t.batches {
		for j := range t.prompts {
			if measured[t.cell(i, j)] {
				continue
			}
			pi, pj, ok := t.pivot(measured, i, j)
			if !ok {
				return fmt.Errorf("perf: profile grid cell batch %g prompt %g has no measured row and column to fill it from",
					t.batches[i], t.prompts[j])
			}
			c, row, col, piv := t.cell(i, j), t.cell(i, pj), t.cell(pi, j), t.cell(pi, pj)
			t.prefill[c] = ratioFill(t.prefill[row], t.prefill[col], t.prefill[piv])
			t.decode[c] = ratioFill(t.decode[row], t.decode[col], t.decode[piv])
		}
	}
	return nil
}

// pivot finds the measured (pi, pj), nearest to (i, j) in log distance,
// with (i, pj) and (pi, j) also measured.
func (t *ProfileTable) pivot(measured []bool, i, j int) (int, int, bool) {
	best, bi, bj := math.Inf(1), -1, -1
	for pi := range t.batches {
		for pj := range t.prompts {
			if !measured[t.cell(pi, pj)] || !measured[t.cell(i, pj)] || !measured[t.cell(pi, j)] {
				continue
			}
			d := math.Abs(math.Log(t.batches[i]/t.batches[pi])) + math.Abs(math.Log(t.prompts[j]/t.prompts[pj]))
			if d < best {
				best, bi, bj = d, pi, pj
			}
		}
	}
	return bi, bj, bi >= 0
}

// ratioFill is row·col/pivot, or the mean of row and col if pivot is 0.
func ratioFill(row, col, pivot float64) float64 {
	if pivot <= 0 {
		return (row + col) / 2
	}
	return row * col / pivot
}

// StepNs returns the step's duration in nanoseconds (see ProfileTable).
func (t *ProfileTable) StepNs(b *Batch) int64 {
	var ms float64
	if b.PrefillSeqs > 0 {
		seqs := float64(b.PrefillSeqs)
		ms += t.interp(t.prefill, seqs, float64(b.PrefillTokens)/seqs)
	}
	if b.DecodeSeqs > 0 {
		seqs := float64(b.DecodeSeqs)
		ms += t.interp(t.decode, seqs, float64(b.DecodeContext)/seqs)
	}
	return int64(math.Round(ms * 1e6))
}

// PrefillMs is the interpolated prefill time of batch prompts of prompt
// tokens each, ms.
func (t *ProfileTable) PrefillMs(batch, prompt float64) float64 {
	return t.interp(t.prefill, batch, prompt)
}

// DecodeMs is the interpolated decode step time of batch sequences whose
// mean context is ctx tokens, ms.
func (t *ProfileTable) DecodeMs(batch, ctx float64) float64 {
	return t.interp(t.decode, batch, ctx)
}

// interp evaluates grid v at (x = batch, y = prompt) bilinearly.
func (t *ProfileTable) interp(v []float64, x, y float64) float64 {
	i0, i1, u := axisPos(t.batches, x)
	j0, j1, w := axisPos(t.prompts, y)
	lo := v[t.cell(i0, j0)]*(1-w) + v[t.cell(i0, j1)]*w
	hi := v[t.cell(i1, j0)]*(1-w) + v[t.cell(i1, j1)]*w
	return math.Max(0, lo*(1-u)+hi*u)
}

// axisPos returns the grid indices bracketing x and x's fractional position
// between them: clamped below the axis, extrapolated (frac > 1) above it.
func axisPos(axis []float64, x float64) (int, int, float64) {
	n := len(axis)
	if n == 1 || x <= axis[0] {
		return 0, 0, 0
	}
	hi := 1
	for hi < n-1 && axis[hi] < x {
		hi++
	}
	lo := hi - 1
	return lo, hi, (x - axis[lo]) / (axis[hi] - axis[lo])
}

// uniqueSorted sorts xs and drops duplicates, in place.
func uniqueSorted(xs []float64) []float64 {
	sort.Float64s(xs)
	out := xs[:0]
	for _, x := range xs {
		if len(out) == 0 || x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// profileGroups lists the distinct model/hardware/tp groups in rows.
func profileGroups(rows []ProfileRow) string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		g := fmt.Sprintf("%s/%s/tp%d", r.Model, r.Hardware, r.TP)
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
