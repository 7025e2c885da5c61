package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// docRunner runs the documents' handoff commands in-process, each
// distinct command once: commands that differ only in their -o directory
// (a block's command and the table row it makes, say) share one run.
// Output paths are redirected into a scratch directory.
type docRunner struct {
	scratch string
	n       atomic.Int64
	mu      sync.Mutex
	runs    map[string]*docRun
}

// docRun is one run of a command.
type docRun struct {
	once           sync.Once
	args           []string // as run, outputs redirected
	out            string   // its output directory or file (-o), if any
	code           int
	stdout, stderr string
	wall           time.Duration
}

// newDocRunner makes a runner whose outputs go under scratch.
func newDocRunner(scratch string) *docRunner {
	return &docRunner{scratch: scratch, runs: map[string]*docRun{}}
}

// slowest lists the n runs that took longest, one a line.
func (r *docRunner) slowest(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := slices.Collect(maps.Values(r.runs))
	slices.SortFunc(runs, func(a, b *docRun) int { return int(b.wall.Microseconds() - a.wall.Microseconds()) })
	var lines []string
	for _, dr := range runs[:min(n, len(runs))] {
		lines = append(lines, fmt.Sprintf("  %6.1f s  handoff %s", dr.wall.Seconds(), strings.Join(dr.args, " ")))
	}
	return strings.Join(lines, "\n")
}

// outputFlags are the flags whose value names a file or directory a
// command writes.
var outputFlags = map[string]bool{"-o": true, "--out": true, "--trace": true}

// outputDefault lists the commands that get an -o directory when they
// have none, so that tables can read what they write.
var outputDefault = map[string]bool{"run": true, "goodput": true, "plan": true}

// outputOnly lists the commands whose -o adds files and changes nothing
// else: runs of them that differ only in -o are one run.
var outputOnly = map[string]bool{"run": true, "goodput": true, "plan": true, "sweep": true}

// run runs handoff with args (as a document writes them, paths already
// mapped by the group), or returns the earlier run of the same command.
func (r *docRunner) run(args []string) *docRun {
	key, outAt := runKey(args)
	r.mu.Lock()
	dr, ok := r.runs[key]
	if !ok {
		dr = &docRun{}
		r.runs[key] = dr
	}
	r.mu.Unlock()
	dr.once.Do(func() {
		fresh := filepath.Join(r.scratch, fmt.Sprint(r.n.Add(1)))
		if err := os.MkdirAll(fresh, 0o755); err != nil {
			dr.code, dr.stderr = 1, err.Error()
			return
		}
		dr.start(redirect(fresh, args, outAt))
	})
	return dr
}

// runKey returns the key that identifies a command (without its -o value
// for the commands in outputOnly) and the index of its -o value in args
// (-1 if none).
func runKey(args []string) (string, int) {
	at := -1
	var key []string
	for i := 0; i < len(args); i++ {
		if (args[i] == "-o" || args[i] == "--out") && i+1 < len(args) {
			at = i + 1
			if outputOnly[args[0]] {
				i++
				continue
			}
		}
		key = append(key, args[i])
	}
	return strings.Join(key, "\x00"), at
}

// redirect returns args with every output path moved into the directory
// fresh, and an -o directory added to the commands in outputDefault.
func redirect(fresh string, args []string, outAt int) []string {
	args = slices.Clone(args)
	for i := 1; i < len(args); i++ {
		if outputFlags[args[i-1]] {
			args[i] = filepath.Join(fresh, filepath.Base(args[i]))
		}
	}
	if outAt < 0 && len(args) > 0 && outputDefault[args[0]] {
		args = append(args, "-o", filepath.Join(fresh, "out"))
	}
	return args
}

// start runs the command.
func (dr *docRun) start(args []string) {
	dr.args = args
	if _, at := runKey(args); at >= 0 {
		dr.out = args[at]
	}
	var stdout, stderr bytes.Buffer
	begin := time.Now()
	dr.code = run(args, &stdout, &stderr)
	dr.wall = time.Since(begin)
	dr.stdout, dr.stderr = stdout.String(), stderr.String()
}

// file reads a file the run wrote into its output directory.
func (dr *docRun) file(name string) ([]byte, error) {
	if dr.out == "" {
		return nil, fmt.Errorf("%s: the command wrote no output directory", strings.Join(dr.args, " "))
	}
	return os.ReadFile(filepath.Join(dr.out, name))
}

// pathMap maps the output paths a group of commands (one code block) names
// to where their runs wrote them, so that a later command of the group
// ("handoff plot out/chosen", "handoff merge out/shard-*") reads them.
type pathMap map[string]string

// apply returns args with paths under a mapped path rewritten, and
// unquoted globs over mapped paths expanded.
func (m pathMap) apply(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, m.rewrite(a)...)
	}
	return out
}

// rewrite maps one word.
func (m pathMap) rewrite(a string) []string {
	if strings.ContainsAny(a, "*?") {
		var docs []string
		for doc := range m {
			if ok, _ := filepath.Match(a, doc); ok {
				docs = append(docs, doc)
			}
		}
		slices.Sort(docs)
		if len(docs) > 0 {
			hits := make([]string, len(docs))
			for i, doc := range docs {
				hits[i] = m[doc]
			}
			return hits
		}
	}
	for doc, real := range m {
		if a == doc || strings.HasPrefix(a, doc+"/") {
			return []string{real + strings.TrimPrefix(a, doc)}
		}
	}
	return []string{a}
}

// note records where a run wrote the -o path its document named.
func (m pathMap) note(docArgs []string, dr *docRun) {
	if _, at := runKey(docArgs); at >= 0 && dr.out != "" {
		m[docArgs[at]] = dr.out
	}
}
