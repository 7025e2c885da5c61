package kv

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"handoff/models/internal/script"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the behaviour scripts in testdata. Each case is a command
// line, a "----" line, and the expected output up to a blank line; lines
// starting with # before a command are comments. Commands:
//
//	new blocks=N [size=S] [nocache]   fresh pool (block size default 4)
//	alloc SEQ N                       Allocate N blocks onto SEQ's table
//	acquire SEQ NAME...               Acquire the blocks holding the named hashes
//	commit SEQ I=NAME...              Commit block I of SEQ's table with hash NAME
//	match NAME...                     Match the named hashes
//	free SEQ                          Free SEQ's table and forget SEQ
//	count N                           AllocateAnonymous N (blocks held as a count)
//	uncount N [content=K]             FreeCounted N of them, K holding content
//	stats                             print the counters
//
// Every command but match and stats prints the tables, the free queue from
// head to tail (cached blocks show their hash name, shared ones their
// refcount in brackets, a free anonymous block is "~") and the counts.
// Check runs after every command.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	s := &scriptState{}
	script.Run(t, path, true, *rewrite, func(lineNo int, cmd string) string { return s.run(t, path, lineNo, cmd) })
}

// scriptState is the interpreter state of one script.
type scriptState struct {
	pool   *Pool
	tables map[string][]BlockID
	names  map[string]uint64
	byHash map[uint64]string
}

// hash returns the hash standing for name, assigning a new one on first use.
func (s *scriptState) hash(name string) uint64 {
	if h, ok := s.names[name]; ok {
		return h
	}
	h := mix64(uint64(len(s.names) + 1))
	s.names[name], s.byHash[h] = h, name
	return h
}

func (s *scriptState) hashes(names []string) []uint64 {
	var hs []uint64
	for _, n := range names {
		hs = append(hs, s.hash(n))
	}
	return hs
}

func (s *scriptState) run(t *testing.T, path string, lineNo int, line string) string {
	t.Helper()
	f := strings.Fields(line)
	fail := func(format string, args ...any) string {
		t.Fatalf("%s:%d: "+format, append([]any{path, lineNo}, args...)...)
		return ""
	}
	if f[0] != "new" && s.pool == nil {
		return fail("%s before new", f[0])
	}
	var out string
	switch f[0] {
	case "new":
		s.newPool(f[1:])
	case "alloc":
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fail("alloc count: %v", err)
		}
		tab, ok := s.pool.Allocate(s.tables[f[1]], n)
		if !ok {
			out = "alloc failed\n"
		}
		if len(tab) > 0 {
			s.tables[f[1]] = tab
		}
	case "acquire":
		s.tables[f[1]] = s.pool.Acquire(s.tables[f[1]], s.hashes(f[2:]))
	case "commit":
		for _, kv := range f[2:] {
			idx, name, _ := strings.Cut(kv, "=")
			i, err := strconv.Atoi(idx)
			if err != nil || i >= len(s.tables[f[1]]) {
				return fail("commit index %q", idx)
			}
			s.pool.Commit(s.tables[f[1]], i, s.hash(name))
		}
	case "free":
		s.pool.Free(s.tables[f[1]])
		delete(s.tables, f[1])
	case "count", "uncount":
		out = s.counted(f)
	case "match":
		return fmt.Sprintf("hit=%d\n", s.pool.Match(s.hashes(f[1:])))
	case "stats":
		return fmt.Sprintf("%+v\n", s.pool.Stats())
	default:
		return fail("unknown command %q", f[0])
	}
	if err := s.pool.Check(); err != nil {
		t.Fatalf("%s:%d: %v", path, lineNo, err)
	}
	return out + s.dump()
}

// counted runs count and uncount.
func (s *scriptState) counted(f []string) string {
	n, _ := strconv.Atoi(f[1])
	if f[0] == "count" {
		if !s.pool.AllocateAnonymous(n) {
			return "alloc failed\n"
		}
		return ""
	}
	content := 0
	if len(f) > 2 {
		content, _ = strconv.Atoi(strings.TrimPrefix(f[2], "content="))
	}
	s.pool.FreeCounted(n, content)
	return ""
}

func (s *scriptState) newPool(args []string) {
	blocks, size, caching := 0, 4, true
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "blocks":
			blocks = n
		case "size":
			size = n
		case "nocache":
			caching = false
		}
	}
	s.pool = NewPool(blocks, size, caching)
	s.tables = map[string][]BlockID{}
	s.names = map[string]uint64{}
	s.byHash = map[uint64]string{}
}

// dump renders tables (sorted by name), the free queue and the counts.
func (s *scriptState) dump() string {
	var b strings.Builder
	seqs := make([]string, 0, len(s.tables))
	for k := range s.tables {
		seqs = append(seqs, k)
	}
	slices.Sort(seqs)
	for _, k := range seqs {
		fmt.Fprintf(&b, "%s:", k)
		for _, id := range s.tables[k] {
			fmt.Fprintf(&b, " %s", s.block(id))
			if r := s.pool.RefCount(id); r > 1 {
				fmt.Fprintf(&b, "[%d]", r)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("queue:")
	p := s.pool
	for _, id := range p.appendQueue(nil) {
		fmt.Fprintf(&b, " %s", s.block(id))
	}
	fmt.Fprintf(&b, "\nfree=%d used=%d cached=%d", p.FreeBlocks(), p.UsedBlocks(), p.CachedBlocks())
	if p.counted > 0 {
		fmt.Fprintf(&b, " counted=%d", p.counted)
	}
	b.WriteString("\n")
	return b.String()
}

// block renders a block ID with its hash name, if any: "3(x)".
func (s *scriptState) block(id BlockID) string {
	if id == anonEntry {
		return "~"
	}
	if h := s.pool.BlockHash(id); h != 0 {
		return fmt.Sprintf("%d(%s)", id, s.byHash[h])
	}
	return strconv.Itoa(int(id))
}
