package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"handoff/results"
)

// Has reports whether dir holds the file name (one of results/layout.go's
// run directory names).
func Has(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// ReadSummary reads dir's summary.json; errors name the file.
func ReadSummary(dir string) (results.Summary, error) {
	return results.ReadSummary(filepath.Join(dir, results.SummaryFile))
}

// ReadScenario returns the text of dir's effective scenario.yaml, and nil
// when there is none (older run directories).
func ReadScenario(dir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, results.ScenarioFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
