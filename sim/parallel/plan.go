package parallel

import (
	"fmt"
	"runtime"
	"strings"

	"handoff/sim"
)

// Cores resolves a number of cores asked for: n itself, or every core of
// the machine for 0. A negative n is an error.
func Cores(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("--cores %d: want a number of cores ≥ 1, or 0 for every core", n)
	case n == 0:
		return runtime.NumCPU(), nil
	}
	return n, nil
}

// Limit keeps the process to cores cores (runtime.GOMAXPROCS) when that
// is between 2 and the machine's count, so that a split run's shards —
// more of them than cores for a large fleet — share the cores asked for.
// One core leaves the runtime as it is: the run is one event loop.
func Limit(cores int) {
	if cores >= 2 && cores < runtime.NumCPU() {
		runtime.GOMAXPROCS(cores)
	}
}

// Pipeline is a run's stages beside its event loop (see the package
// comment). Attach starts them; Close, once the run is over, joins them
// and gives the configuration its own source and sink back.
type Pipeline struct {
	cfg    *sim.Config
	src    sim.Source
	rec    sim.RecordSink
	pre    *prefetch
	sink   *asyncSink
	closed bool

	// Note says, in one line, what runs beside the event loop, which runs
	// on one core, and what runs in step with it and why; "" on one core.
	Note string
}

// Attach prepares cfg to run on cores cores: with more than one, its
// source is read ahead and its records consumed on goroutines of their
// own. Call Close when sim.Run has returned (also after an error); a
// panic of the source or a consumer is raised again from sim.Run or Close.
func Attach(cfg *sim.Config, cores int) *Pipeline {
	p := &Pipeline{cfg: cfg, src: cfg.Source, rec: cfg.Records}
	if cores < 2 {
		return p
	}
	var beside []string
	why := inStep(cfg)
	if why == "" {
		cfg.Source, p.pre = newPrefetch(cfg.Source)
		beside = append(beside, "the workload is read ahead")
	}
	if cfg.Records != nil {
		p.sink = newAsyncSink(cfg.Records)
		cfg.Records = p.sink
		beside = append(beside, "the records are consumed")
	}
	p.Note = note(cores, beside, why)
	return p
}

// note is Pipeline.Note: on cores cores, what runs beside the loop, and
// why the workload does not (why, or "").
func note(cores int, beside []string, why string) string {
	s := fmt.Sprintf("%d cores: the event loop runs on one", cores)
	if len(beside) > 0 {
		s += ", and beside it " + strings.Join(beside, " and ")
	} else {
		s += ", and the run keeps its records, so nothing runs beside it"
	}
	if why != "" {
		s += "; " + why
	}
	return s
}

// inStep says why cfg's source must be read in step with the run, or "":
// the requests of a closed loop and a session's turns are sent as earlier
// requests end, and a closed loop reads only as many as it sends.
func inStep(cfg *sim.Config) string {
	if _, ok := cfg.Source.(sim.SessionSource); ok {
		return "a session's turns are sent as the turns before them end, so the workload is read in step with the run"
	}
	if cfg.Client.Concurrency > 0 {
		return "a closed loop's users send as their requests end, so the workload is read in step with the run"
	}
	return ""
}

// Close stops the stages, waits for them (the consumers have every record
// when it returns) and restores the configuration's source and sink. It
// may be called more than once.
func (p *Pipeline) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.cfg.Source, p.cfg.Records = p.src, p.rec
	if p.pre != nil {
		p.pre.close()
	}
	if p.sink != nil {
		p.sink.close()
	}
}

// Run runs cfg on cores cores and returns what sim.Run(cfg) returns, the
// same byte for byte in every output. A fleet whose instances never
// affect one another (sim.NewSplit) runs as shards, an event loop each on
// a core of its own (split.go), its Events then counting the shards'
// events; any other runs as one event loop with the stages of Attach
// beside it. note, when not nil, is told once, before the run, what runs
// where and why (nothing on one core).
func Run(cfg *sim.Config, cores int, note func(string)) (*sim.Result, error) {
	sp, why := sim.NewSplit(cfg, shards(cores, len(cfg.Instances)))
	if sp != nil {
		if note != nil {
			note(fmt.Sprintf("%d cores: the fleet's %d instances run as %d shards, an event loop each, and their records are merged beside them: round_robin reads no state the instances change, so none affects another",
				cores, len(cfg.Instances), sp.Shards()))
		}
		return runSplit(cfg, sp)
	}
	p := Attach(cfg, cores)
	defer p.Close()
	if p.Note != "" && note != nil {
		note(p.Note + "; the event loop is not split: " + why)
	}
	res, err := sim.Run(cfg)
	p.Close()
	return res, err
}

// A split run's shards: one per core at least, and more for a large fleet,
// about shardInstances instances each, up to maxShards. A shard's event
// loop touches only its own instances, so the fewer it has, the more of
// their state stays in the caches: on the reference workload's 1,024
// instances (docs/PARALLEL.md), 16 shards on two cores took 22–26% less
// CPU than 2, and on 16,384, 64 shards 38% less than 2 (256 took more
// memory and no less time).
const (
	shardInstances = 64
	maxShards      = 64
)

// shards is how many shards a split run of n instances on cores cores
// takes (none on one core: one core runs the fleet whole).
func shards(cores, n int) int {
	if cores < 2 {
		return cores
	}
	return max(cores, min((n+shardInstances-1)/shardInstances, maxShards))
}
