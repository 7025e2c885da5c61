package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"handoff/models/kv"
	"handoff/models/perf"
)

// cruiseWorld drives two instances with the same configuration and the same
// arrivals, transfers and step times: lazy lets sequences cruise, eager
// never does. Every batch, every step result and the state of every
// sequence the results hand out must agree (sequences are matched by Ref).
type cruiseWorld struct {
	r           *rand.Rand
	lazy, eager *Instance
	role        int // 0 colocated, 1 decode (remote prompts), 2 prefill (held)
	seqs        [][2]*Seq
	pulls       [][2]*Seq // pulling: their KV arrives (or is lost) later
	held        [][2]*Seq // prefill role: finished, released later
	nowNs       int64
	runSteps    int // steps taken with AdvanceSteady
	err         error
}

func (w *cruiseWorld) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("at %d ns: %s", w.nowNs, fmt.Sprintf(format, args...))
	}
}

func randomCruiseConfig(r *rand.Rand) Config {
	cfg := Config{
		MaxBatchedTokens: []int{8, 40, 256, 8192}[r.IntN(4)],
		MaxSeqs:          1 + r.IntN(12),
		BlockSize:        []int{1, 4, 16}[r.IntN(3)],
		NumBlocks:        10 + r.IntN(150),
		MaxModelLen:      []int{90, 1 << 20}[r.IntN(2)],
		PrefixCaching:    r.IntN(2) == 0,
		Preemption:       Policy(r.IntN(3)),
		HostBlocks:       r.IntN(60),
		AsyncScheduling:  r.IntN(2) == 0,
	}
	switch r.IntN(5) {
	case 0:
		cfg.Layouts = [][]SlotClass{{{Count: 1 + r.IntN(3), ContextTokens: 400}, {Count: 1 + r.IntN(3), ContextTokens: 120}},
			{{Count: 1, ContextTokens: 600}}}
		cfg.Pressure = Pressure(r.IntN(3))
		cfg.RecompileNs = 100
	case 1, 2: // a hybrid model: windows short and long, aligned to blocks or not
		cfg.SlidingWindow = []int{1, 2, 5, 16, 17, 33, 128}[r.IntN(7)]
		cfg.SlidingGroups = 1 + r.IntN(3)
		cfg.NumBlocks += 60
	}
	if cfg.Layouts == nil && r.IntN(2) == 0 {
		cfg.Scheduling = "priority"
	}
	return cfg
}

func newCruiseWorld(seed uint64) (*cruiseWorld, error) {
	r := rand.New(rand.NewPCG(seed, 3))
	cfg := randomCruiseConfig(r)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &cruiseWorld{r: r, lazy: New(cfg), eager: New(cfg), role: r.IntN(3)}
	w.eager.noCruise = true
	return w, nil
}

// arrive enqueues one new sequence on both instances.
func (w *cruiseWorld) arrive() {
	capacity := w.lazy.cfg.CapacityTokens()
	prompt := 1 + w.r.IntN(min(150, capacity-1))
	out := 1 + w.r.IntN(min(80, capacity-prompt))
	var prefix []kv.Segment
	if w.r.IntN(2) == 0 {
		prefix = []kv.Segment{{ID: uint64(1 + w.r.IntN(3)), Tokens: min(prompt, 1+w.r.IntN(40))}}
	}
	var pair [2]*Seq
	prio := int32(w.r.IntN(3))
	for k, in := range []*Instance{w.lazy, w.eager} {
		s := in.NewSeq()
		s.Ref = int32(len(w.seqs))
		s.PromptTokens, s.MaxNew, s.UniqueID, s.Prefix = prompt, out, uint64(len(w.seqs))+100, prefix
		s.Remote = w.role == 1
		s.Priority = prio
		if w.role == 2 {
			s.Hold, s.MaxNew = true, 1
		}
		if in.cfg.Preemption == Reject {
			s.CacheHitThreshold = 0.5
		}
		in.Enqueue(s, w.nowNs)
		pair[k] = s
	}
	w.seqs = append(w.seqs, pair)
}

// sameSeqs compares two result lists by Ref and the listed sequences' state.
func (w *cruiseWorld) sameSeqs(what string, lazy, eager []*Seq) {
	if len(lazy) != len(eager) {
		w.fail("%s: %d sequences, eager %d", what, len(lazy), len(eager))
		return
	}
	for i, a := range lazy {
		b := eager[i]
		sa := fmt.Sprintf("%d %d %d %d %v %d %d %d %d %d %d", a.Ref, a.computed, a.Generated, a.committed, a.Acct,
			a.markNs, a.LastTokenNs, len(a.blocks), a.skipped, a.Preemptions, a.state)
		sb := fmt.Sprintf("%d %d %d %d %v %d %d %d %d %d %d", b.Ref, b.computed, b.Generated, b.committed, b.Acct,
			b.markNs, b.LastTokenNs, len(b.blocks), b.skipped, b.Preemptions, b.state)
		if sa != sb {
			w.fail("%s[%d]: ref computed generated committed acct mark last blocks skipped preemptions state\nlazy  %s\neager %s",
				what, i, sa, sb)
		}
	}
}

// gaps is every inter-token gap a result reports, sorted.
func gaps(res *StepResult) []int64 {
	g := slices.Clone(res.TokenGapsNs)
	for range res.SteadyTokens {
		g = append(g, res.SteadyGapNs)
	}
	slices.Sort(g)
	return g
}

func (w *cruiseWorld) compareResults(lr, er *StepResult) {
	w.sameSeqs("FirstTokens", lr.FirstTokens, er.FirstTokens)
	w.sameSeqs("Finished", lr.Finished, er.Finished)
	w.sameSeqs("Preempted", lr.Preempted, er.Preempted)
	w.sameSeqs("Pulls", lr.Pulls, er.Pulls)
	w.sameSeqs("Rejected", lr.Rejected, er.Rejected)
	w.sameSeqs("FinalChunks", lr.FinalChunks, er.FinalChunks)
	w.sameSeqs("Recovered", lr.Recovered, er.Recovered)
	if lg, eg := gaps(lr), gaps(er); !slices.Equal(lg, eg) {
		w.fail("gaps %v, eager %v", lg, eg)
	}
	l, e := w.lazy, w.eager
	ls := l.stats
	ls.SteadySteps = 0 // the one counter that differs by design
	if ls != e.stats || l.pool.Stats() != e.pool.Stats() || l.pool.FreeBlocks() != e.pool.FreeBlocks() ||
		l.Running() != e.Running() || l.Waiting() != e.Waiting() || l.pulling != e.pulling ||
		l.holding != e.holding || l.HostBlocksUsed() != e.HostBlocksUsed() {
		w.fail("instance state differs: stats %+v / %+v, pool %+v / %+v", l.stats, e.stats, l.pool.Stats(), e.pool.Stats())
	}
}

// handOut acts on what a result hands the caller: pulls to complete later,
// held sequences to release later, finished and rejected ones to recycle.
func (w *cruiseWorld) handOut(lr, er *StepResult) {
	for i, s := range lr.Pulls {
		w.pulls = append(w.pulls, [2]*Seq{s, er.Pulls[i]})
	}
	for i, s := range lr.Finished {
		if s.Hold {
			w.held = append(w.held, [2]*Seq{s, er.Finished[i]})
		} else {
			w.lazy.Recycle(s)
			w.eager.Recycle(er.Finished[i])
		}
	}
	for i, s := range lr.Rejected {
		w.lazy.Recycle(s)
		w.eager.Recycle(er.Rejected[i])
	}
}

// external delivers one pending transfer or releases one held sequence.
func (w *cruiseWorld) external() {
	if len(w.pulls) > 0 && w.r.IntN(2) == 0 {
		i := w.r.IntN(len(w.pulls))
		p := w.pulls[i]
		w.pulls = slices.Delete(w.pulls, i, i+1)
		if w.r.IntN(8) == 0 {
			w.lazy.KVLost(p[0], w.nowNs)
			w.eager.KVLost(p[1], w.nowNs)
		} else {
			w.lazy.KVArrived(p[0], w.nowNs)
			w.eager.KVArrived(p[1], w.nowNs)
		}
	}
	if len(w.held) > 0 && w.r.IntN(2) == 0 {
		i := w.r.IntN(len(w.held))
		h := w.held[i]
		w.held = slices.Delete(w.held, i, i+1)
		w.lazy.Release(h[0])
		w.eager.Release(h[1])
		w.lazy.Recycle(h[0])
		w.eager.Recycle(h[1])
	}
}

// tick advances time and runs one step if there is one to run.
func (w *cruiseWorld) tick() {
	w.nowNs += int64(w.r.IntN(3)) * int64(w.r.IntN(200))
	if w.r.IntN(3) == 0 {
		w.arrive()
	}
	w.external()
	if l, e := w.lazy.RecompileDue(), w.eager.RecompileDue(); l != e {
		w.fail("RecompileDue %v, eager %v", l, e)
	} else if l {
		w.lazy.Recompiled()
		w.eager.Recompiled()
	}
	lb, lr := w.lazy.Schedule(w.nowNs)
	eb, er := w.eager.Schedule(w.nowNs)
	if (lb == nil) != (eb == nil) || lb != nil && *lb != *eb {
		w.fail("batch %+v, eager %+v", lb, eb)
		return
	}
	w.compareResults(lr, er)
	w.handOut(lr, er)
	if lb == nil {
		return
	}
	start := w.nowNs
	if w.r.IntN(2) == 0 {
		start = w.run(start)
	}
	w.nowNs += 1 + int64(w.r.IntN(500))
	lr, er = w.lazy.Complete(start, w.nowNs), w.eager.Complete(start, w.nowNs)
	w.compareResults(lr, er)
	w.handOut(lr, er)
}

// run takes the pure steady steps that may follow the step in flight,
// begun at startNs (engine/run.go): on the lazy instance a few at a time
// with AdvanceSteady, on the eager one with Complete and Schedule at each
// end. It returns the start of the last one planned. Each chunk's last
// batch must be what RunBatch predicted.
func (w *cruiseWorld) run(startNs int64) int64 {
	m := w.lazy.RunSteps(1 + w.r.IntN(6))
	for m > 0 && w.err == nil {
		chunk := 1 + w.r.IntN(m)
		m -= chunk
		var want perf.Batch
		w.lazy.RunBatch(chunk, &want)
		ends := make([]int64, chunk)
		for c := range ends {
			ends[c] = startNs + 1 + int64(w.r.IntN(500))
			if c > 0 {
				ends[c] += ends[c-1] - startNs
			}
		}
		prev := w.lazy.lastEndNs
		n, first := w.lazy.AdvanceSteady(startNs, ends)
		if first != ends[0]-prev {
			w.fail("run: first gap %d ns, want %d", first, ends[0]-prev)
		}
		var er *StepResult
		for _, end := range ends {
			er = w.eager.Complete(startNs, end)
			if g := gaps(er); len(er.FirstTokens)+len(er.Finished) != 0 || len(g) != n || n > 0 && (g[0] != end-prev || g[len(g)-1] != end-prev) {
				w.fail("run: %d tokens %d ns apart, eager %v (%d first, %d finished)", n, end-prev, g, len(er.FirstTokens), len(er.Finished))
			}
			var eb *perf.Batch
			if eb, er = w.eager.Schedule(end); eb == nil {
				w.fail("run: eager planned no step")
				return startNs
			}
			startNs, prev, w.nowNs = end, end, end
			w.runSteps++
		}
		if w.lazy.batch != want || w.eager.batch != want {
			w.fail("run: batch %+v, predicted %+v, eager %+v", w.lazy.batch, want, w.eager.batch)
		}
		w.compareResults(&w.lazy.res, er)
	}
	return startNs
}

// TestCruiseMatchesEager holds cruising, and runs of pure steady steps
// (run.go), to their promise (cruise.go): over
// random configurations (paged and slot mode, sliding-window groups, every
// preemption and pressure policy, both scheduling policies, budgets that leave sequences out, prefix
// caching, all three roles), an instance whose sequences cruise produces
// exactly what one that visits every sequence in every step does, and the
// cruising path is taken, with sliding windows too.
func TestCruiseMatchesEager(t *testing.T) {
	seeds, ticks := uint64(600), 600
	if testing.Short() {
		seeds = 100
	}
	var cruised, slidCruising, steady, short, runSteps int64
	for seed := range seeds {
		w, err := newCruiseWorld(seed)
		if err != nil {
			continue // an impossible configuration
		}
		for range ticks {
			w.tick()
			cruised += int64(w.lazy.res.SteadyTokens)
			if w.lazy.cfg.SlidingGroups > 0 {
				slidCruising += int64(w.lazy.res.SteadyTokens)
			}
			if w.err != nil {
				t.Fatalf("seed %d (role %d, config %+v): %v", seed, w.role, w.lazy.cfg, w.err)
			}
		}
		if err := w.lazy.pool.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		steady, short = steady+w.lazy.stats.SteadySteps, short+w.lazy.steadyShort
		runSteps += int64(w.runSteps)
	}
	if cruised == 0 || slidCruising == 0 || steady == 0 || short == 0 || runSteps == 0 {
		t.Fatalf("%d tokens came from cruising sequences, %d with sliding windows, %d steps were steady, %d not "+
			"for want of blocks and %d were run: the test exercises too little", cruised, slidCruising, steady, short, runSteps)
	}
	t.Logf("%d tokens produced by cruising sequences (%d with sliding windows); %d steady steps, %d short of blocks, %d run",
		cruised, slidCruising, steady, short, runSteps)
}

// TestSeqLayout pins what the hot fields of Seq rely on: the struct is a
// whole number of cache lines, so allocations keep them aligned, and they
// all lie in the first two.
func TestSeqLayout(t *testing.T) {
	var s Seq
	if size := unsafe.Sizeof(s); size%64 != 0 {
		t.Errorf("Seq is %d bytes; adjust seqPad to make it a multiple of 64", size)
	}
	if end := unsafe.Offsetof(s.blocks) + unsafe.Sizeof(s.blocks); end > 128 {
		t.Errorf("the hot fields end at byte %d, past the second cache line", end)
	}
}
