package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"handoff/scenarios"
)

// inputFile is one file a scenario reads (scenarios.Loaded.Inputs) and the
// SHA-256 of its content when it was read.
type inputFile struct {
	Path   string `json:"path"` // relative to the scenario file's folder, slash-separated; absolute when outside it
	SHA256 string `json:"sha256"`
}

// inputSums hashes the input files of a sweep's scenarios, each file once
// per run of the command. Safe for the sweep's goroutines.
type inputSums struct {
	dir  string // the scenario file's folder, absolute
	mu   sync.Mutex
	sums map[string]string // absolute path → hex SHA-256
}

// newInputSums returns the hashes of the inputs of scenarios in the
// folder of scenario file.
func newInputSums(file string) (*inputSums, error) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	return &inputSums{dir: dir, sums: map[string]string{}}, nil
}

// files returns the files l reads with their hashes, in l.Inputs' order.
func (s *inputSums) files(l *scenarios.Loaded) ([]inputFile, error) {
	out := []inputFile{}
	for _, p := range l.Inputs() {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		sum, err := s.sum(abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.File, err)
		}
		out = append(out, inputFile{Path: s.key(abs), SHA256: sum})
	}
	return out, nil
}

// key names abs as inputFile.Path does.
func (s *inputSums) key(abs string) string {
	rel, err := filepath.Rel(s.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// resolve returns the file an inputFile.Path names, absolute.
func (s *inputSums) resolve(key string) string {
	if p := filepath.FromSlash(key); filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, filepath.FromSlash(key))
}

// sum returns the hash of the file at abs, reading it the first time.
func (s *inputSums) sum(abs string) (string, error) {
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

// changed returns the first of files, hashed when a point was made, that
// is not as it was, and what became of it ("has changed since", "cannot be
// read now: …"); why is "" when every one is unchanged.
func (s *inputSums) changed(files []inputFile) (path, why string) {
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
