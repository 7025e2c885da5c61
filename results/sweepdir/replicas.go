package sweepdir

import (
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"handoff/results"
	"handoff/results/outdir"
)

// replicaFigures are the figures replicas.csv spreads: name and value.
var replicaFigures = []struct {
	name  string
	value func(*results.Summary) float64
}{
	{"attainment", func(s *results.Summary) float64 { return s.SLO.Attainment }},
	{"request_goodput_rps", func(s *results.Summary) float64 { return s.SLO.RequestGoodputRPS }},
	{"throughput_rps", func(s *results.Summary) float64 { return s.Throughput.RequestsPerS }},
	{"output_tokens_per_s", func(s *results.Summary) float64 { return s.Throughput.OutputTokensPerS }},
	{"ttft_mean_s", func(s *results.Summary) float64 { return s.TTFT.Mean }},
	{"ttft_p99_s", func(s *results.Summary) float64 { return s.TTFT.P99 }},
	{"tpot_mean_s", func(s *results.Summary) float64 { return s.TPOT.Mean }},
	{"tpot_p99_s", func(s *results.Summary) float64 { return s.TPOT.P99 }},
	{"e2e_mean_s", func(s *results.Summary) float64 { return s.E2E.Mean }},
}

// writeReplicas writes dir/replicas.csv for a sweep whose columns include
// the replicas' seed: one row per configuration (every varied column but
// the seed, in order of first appearance) with its replica count and, per
// figure, the mean over the replicas and the 95 % interval of that mean
// (Student's t on the replicas' sample standard deviation; the mean alone
// for one replica), so replicas are read with their spread rather than
// averaged silently.
func writeReplicas(dir string, columns []string, points []Point) error {
	seed := slices.Index(columns, SeedPath)
	if seed < 0 {
		return nil
	}
	var keys []string
	groups := map[string]*replicaGroup{}
	for _, p := range points {
		s, err := ReadPointSummary(dir, p.ID)
		if err != nil {
			return err
		}
		key := replicaKey(p, seed)
		g := groups[key]
		if g == nil {
			g = &replicaGroup{point: p, values: make([][]float64, len(replicaFigures))}
			groups[key], keys = g, append(keys, key)
		}
		for k, f := range replicaFigures {
			g.values[k] = append(g.values[k], f.value(&s))
		}
	}
	return outdir.WriteIn(dir, results.SweepReplicasFile, func(w io.Writer) error {
		return writeReplicasCSV(w, columns, seed, keys, groups)
	})
}

// replicaGroup is one configuration's replicas: its first point (for the
// varied values) and each figure's values.
type replicaGroup struct {
	point  Point
	values [][]float64
}

// replicaKey names a point's configuration: its values but the seed's.
func replicaKey(p Point, seed int) string {
	var b strings.Builder
	for i, o := range p.Overrides {
		if i != seed {
			b.WriteString(o.Value)
			b.WriteByte(0)
		}
	}
	return b.String()
}

func writeReplicasCSV(w io.Writer, columns []string, seed int, keys []string, groups map[string]*replicaGroup) error {
	cw := csv.NewWriter(w)
	head := slices.Delete(slices.Clone(columns), seed, seed+1)
	head = append(head, "replicas")
	for _, f := range replicaFigures {
		head = append(head, f.name+"_mean", f.name+"_ci95_lo", f.name+"_ci95_hi")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, key := range keys {
		g := groups[key]
		var row []string
		for i, o := range g.point.Overrides {
			if i != seed {
				row = append(row, o.Value)
			}
		}
		row = append(row, strconv.Itoa(len(g.values[0])))
		for _, vs := range g.values {
			mean, lo, hi := meanInterval(vs)
			row = append(row, csvNum(mean), csvNum(lo), csvNum(hi))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// meanInterval is the mean of xs and its 95 % confidence interval:
// mean ± t(0.975, n−1)·s/√n with s the sample standard deviation; the
// mean alone for one value.
func meanInterval(xs []float64) (mean, lo, hi float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, mean, mean
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	half := t * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	return mean, mean - half, mean + half
}
