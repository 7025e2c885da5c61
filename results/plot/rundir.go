package plot

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"handoff/results"
)

// runFigures returns the plots of a run directory: latency CDFs (when
// requests.csv is there) and attribution.
func runFigures(dir string) ([]figure, error) {
	sum, err := results.ReadSummary(filepath.Join(dir, summaryJSON))
	if err != nil {
		return nil, err
	}
	name := sum.Scenario
	if name == "" {
		name = filepath.Base(dir)
	}
	var figs []figure
	if path := filepath.Join(dir, requestsCSV); exists(path) {
		ttft, tpot, err := readLatencies(path)
		if err != nil {
			return nil, err
		}
		figs = append(figs,
			cdfFigure("ttft_cdf", "TTFT", CDFSeries{Name: name, ValuesS: ttft}, sum.SLO.TTFTS),
			cdfFigure("tpot_cdf", "TPOT", CDFSeries{Name: name, ValuesS: tpot}, sum.SLO.TPOTS))
	}
	figs = append(figs, attributionFigures([]string{name}, []results.Attribution{sum.Attribution}, "")...)
	if path := filepath.Join(dir, results.TimelineFile); exists(path) {
		tl, err := timelineFigures(path)
		if err != nil {
			return nil, err
		}
		figs = append(figs, tl...)
	}
	return figs, nil
}

// cdfFigure returns the CDF plot of one series.
func cdfFigure(name, metric string, s CDFSeries, sloS float64) figure {
	return figure{name, func(w io.Writer, f Format) error { return LatencyCDF(w, f, []CDFSeries{s}, sloS, metric) }}
}

// readLatencies returns the TTFT and TPOT (s) of the completed requests
// in a requests.csv; empty cells (undefined metrics) are skipped.
func readLatencies(path string) (ttftS, tpotS []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: header: %w", path, err)
	}
	cols, err := columnIndex(path, header, "status", "ttft_s", "tpot_s")
	if err != nil {
		return nil, nil, err
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return ttftS, tpotS, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if rec[cols[0]] != results.Completed.String() {
			continue
		}
		line, _ := r.FieldPos(0)
		if ttftS, err = appendCell(ttftS, rec[cols[1]], path, line, "ttft_s"); err != nil {
			return nil, nil, err
		}
		if tpotS, err = appendCell(tpotS, rec[cols[2]], path, line, "tpot_s"); err != nil {
			return nil, nil, err
		}
	}
}

// appendCell appends the number in cell to vs; an empty cell adds nothing.
func appendCell(vs []float64, cell, path string, line int, column string) ([]float64, error) {
	if cell == "" {
		return vs, nil
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: column %s: not a number: %q", path, line, column, cell)
	}
	return append(vs, v), nil
}

// columnIndex returns the positions of the named columns in header.
func columnIndex(path string, header []string, names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, name := range names {
		idx[i] = -1
		for j, h := range header {
			if h == name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s:1: no %s column", path, name)
		}
	}
	return idx, nil
}
