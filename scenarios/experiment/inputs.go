package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"handoff/results/sweepdir"
	"handoff/scenarios"
)

// InputSums hashes the input files of a sweep's scenarios, each file once
// per run of the command. Safe for the sweep's goroutines.
type InputSums struct {
	dir  string // the scenario file's folder, absolute
	mu   sync.Mutex
	sums map[string]string // absolute path → hex SHA-256
}

// NewInputSums returns the hashes of the inputs of scenarios in the
// folder of scenario file.
func NewInputSums(file string) (*InputSums, error) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	return &InputSums{dir: dir, sums: map[string]string{}}, nil
}

// Files returns the files l reads with their hashes, in l.Inputs' order.
func (s *InputSums) Files(l *scenarios.Loaded) ([]sweepdir.InputFile, error) {
	out := []sweepdir.InputFile{}
	for _, p := range l.Inputs() {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		sum, err := s.sum(abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.File, err)
		}
		out = append(out, sweepdir.InputFile{Path: s.key(abs), SHA256: sum})
	}
	return out, nil
}

// key names abs as sweepdir.InputFile.Path does.
func (s *InputSums) key(abs string) string {
	rel, err := filepath.Rel(s.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// resolve returns the file a sweepdir.InputFile.Path names, absolute.
func (s *InputSums) resolve(key string) string {
	if p := filepath.FromSlash(key); filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, filepath.FromSlash(key))
}

// sum returns the hash of the file at abs, reading it the first time.
func (s *InputSums) sum(abs string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sum, ok := s.sums[abs]; ok {
		return sum, nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", abs, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	s.sums[abs] = sum
	return sum, nil
}

// Changed returns the first of files, hashed when a point was made, that
// is not as it was, and what became of it ("has changed since", "cannot be
// read now: …"); why is "" when every one is unchanged.
func (s *InputSums) Changed(files []sweepdir.InputFile) (path, why string) {
	for _, f := range files {
		path = s.resolve(f.Path)
		now, err := s.sum(path)
		switch {
		case err != nil:
			return path, fmt.Sprintf("cannot be read now (%v)", err)
		case now != f.SHA256:
			return path, "has changed since"
		}
	}
	return "", ""
}
