package sim

import (
	"handoff/models/engine"
	"handoff/models/router"
)

// Onboarding: copies of KV blocks up from an instance's lower tiers.
//
// Every tier's reads cross one link of the run's network (network.go's
// max-min sharing): an instance's host tier its PCIe host-to-device link,
// its disk its drive's read bandwidth, and a shared store one link that
// every instance reading from it shares. A sequence's onboard is one
// transfer per tier it reads from; it is done when the last is, and the
// engine then goes on with its prefill (Instance.Onboarded). A decoder
// that finds part of a prompt in its tiers reads it beside its pull from
// the prefiller, and the transfer is done when both are. A read of blocks
// still being written starts when their write lands.
//
// Onboards ride the network under refs with onboardRef set, indexing
// c.tiers.jobs; a job outlives an aborted sequence (its transfers run
// on, and are then ignored).

// onboardRef marks a network ref as an onboard job's.
const onboardRef = 1 << 30

// tierState is a run's tier links and the onboards in flight.
type tierState struct {
	paths      [][engine.NumTiers][]int32 // per instance: each tier's read path, one link; nil none
	jobs       []onboardJob
	freeJobs   []int32
	starts     []pendingStart // reads waiting for their write to land
	freeStarts []int32
	kick       []int32 // scratch: instances to kick after a network event
}

// pendingStart is a read that waits for its blocks' write to land.
type pendingStart struct {
	ref       int32
	path      []int32
	latencyNs int64
	bytes     float64
}

// startAfter starts a transfer at atNs: now, or, for a read of blocks
// still being written, once their write lands.
func (c *cluster) startAfter(atNs int64, ref int32, path []int32, latencyNs int64, bytes float64) {
	if atNs <= c.nowNs {
		c.net.Start(ref, path, latencyNs, bytes, c.nowNs)
		return
	}
	t := &c.tiers
	p := pendingStart{ref: ref, path: path, latencyNs: latencyNs, bytes: bytes}
	k := int32(len(t.starts))
	if n := len(t.freeStarts); n > 0 {
		k, t.freeStarts = t.freeStarts[n-1], t.freeStarts[:n-1]
		t.starts[k] = p
	} else {
		t.starts = append(t.starts, p)
	}
	c.q.push(atNs, classNetStart, k)
}

// onNetStart starts pending transfer k.
func (c *cluster) onNetStart(k int32) {
	t := &c.tiers
	p := t.starts[k]
	t.starts[k], t.freeStarts = pendingStart{}, append(t.freeStarts, k)
	c.net.Start(p.ref, p.path, p.latencyNs, p.bytes, c.nowNs)
	c.scheduleNetwork()
}

// onboardJob is one sequence's copies up from its tiers.
type onboardJob struct {
	ref    int32 // its flight
	inst   int32
	left   int8 // transfers in flight
	live   bool // false once its sequence is aborted
	remote bool // part of a decoder's pull, not a local onboard
}

// hasTiers reports whether any instance has lower tiers.
func (c *Config) hasTiers() bool {
	for i := range c.Instances {
		if len(c.Instances[i].Engine.Tiers) > 0 {
			return true
		}
	}
	return false
}

// initTiers adds a read link per tier to the network: "<instance>/host-read"
// and "<instance>/disk-read", and one "store/read" per shared store.
func (c *cluster) initTiers(caps []float64, names []string) ([]float64, []string) {
	if !c.cfg.hasTiers() {
		return caps, names
	}
	caps, names = append([]float64(nil), caps...), append([]string(nil), names...)
	t := &c.tiers
	t.paths = make([][engine.NumTiers][]int32, len(c.cfg.Instances))
	stores := map[*engine.Tier][]int32{}
	for i := range c.cfg.Instances {
		ic := &c.cfg.Instances[i]
		for _, tr := range ic.Engine.Tiers {
			path, ok := stores[tr]
			if !ok {
				path = []int32{int32(len(caps))}
				name := ic.Name + "/" + tr.Kind.String() + "-read"
				if tr.Kind == engine.TierStore {
					name = "store/read"
					stores[tr] = path
				}
				caps, names = append(caps, tr.ReadBps), append(names, name)
			}
			t.paths[i][tr.Kind] = path
		}
	}
	return caps, names
}

// startOnboard times the copies up of sequence s on instance i: one
// transfer per tier it reads from, of every KV cache group's blocks it
// reads there (a hybrid model's sliding-window blocks are no prompt
// tokens of their own). remote: a decoder's reads beside its
// pull (startPull).
func (c *cluster) startOnboard(i int, s *engine.Seq, remote bool) {
	j := c.newJob(onboardJob{ref: s.Ref, inst: int32(i), live: true, remote: remote})
	rec := c.record(c.flights.at(s.Ref).req.ID)
	bs := int32(c.replicas[i].cfg.Engine.BlockSize)
	for _, tr := range c.replicas[i].cfg.Engine.Tiers {
		n := s.Onboard[tr.Kind]
		if n == 0 {
			continue
		}
		if !remote { // a decoder's reads are its prompt's handoff, not prefix hits
			rec.TierTokens[tr.Kind] += (n - int32(s.OnboardSliding[tr.Kind])) * bs
		}
		c.startAfter(s.OnboardReadyNs, onboardRef|j, c.tiers.paths[i][tr.Kind], tr.ReadLatencyNs,
			float64(n)*tr.BlockBytes)
		c.tiers.jobs[j].left++
	}
	if !remote {
		c.flights.at(s.Ref).onboardJob = j + 1
	}
	c.scheduleNetwork()
}

// storePath is the path and latency of a read of prefill instance p's KV
// from the store it writes to.
func (c *cluster) storePath(p int) ([]int32, int64) {
	for _, tr := range c.replicas[p].cfg.Engine.Tiers {
		if tr.Kind == engine.TierStore {
			return c.tiers.paths[p][engine.TierStore], tr.ReadLatencyNs
		}
	}
	panic("sim: a store handoff from an instance without a store (simulator bug)")
}

// predictOnboardNs predicts a read of blocks from instance i's tiers now:
// the slowest tier's, each at the rate a new read would get on its link.
func (c *cluster) predictOnboardNs(i int, blocks router.TierBlocks) int64 {
	var ns int64
	for _, tr := range c.replicas[i].cfg.Engine.Tiers {
		if n := blocks[tr.Kind]; n > 0 {
			ns = max(ns, c.net.PredictNs(c.tiers.paths[i][tr.Kind], tr.ReadLatencyNs, float64(n)*tr.BlockBytes))
		}
	}
	return ns
}

func (c *cluster) newJob(j onboardJob) int32 {
	t := &c.tiers
	if n := len(t.freeJobs); n > 0 {
		k := t.freeJobs[n-1]
		t.freeJobs = t.freeJobs[:n-1]
		t.jobs[k] = j
		return k
	}
	t.jobs = append(t.jobs, j)
	return int32(len(t.jobs) - 1)
}

// onboardDone applies one finished tier read of job j; the job's last
// hands its sequence back to its engine, or, for a decoder's reads, lets
// its pull complete.
func (c *cluster) onboardDone(j int32) {
	job := &c.tiers.jobs[j]
	if job.left--; job.left > 0 {
		return
	}
	done := *job
	c.tiers.freeJobs = append(c.tiers.freeJobs, j)
	if !done.live {
		return
	}
	f := c.flights.at(done.ref)
	if done.remote {
		if f.phase == phaseFailover {
			f.readsPending, f.pullDone = false, false
			return
		}
		f.readsPending = false
		if f.pullDone {
			f.pullDone = false
			c.transferred(done.ref)
			c.tiers.kick = append(c.tiers.kick, int32(f.route.Decode), int32(f.route.Prefill))
		}
		return
	}
	f.onboardJob = 0
	s := f.pseq
	if f.dseq != nil && f.dseq.Onboarding() {
		s = f.dseq
	}
	c.touch(int(done.inst)).Onboarded(s, c.nowNs)
	c.tiers.kick = append(c.tiers.kick, done.inst)
}

// cancelOnboard forgets the onboard of a sequence being aborted.
func (c *cluster) cancelOnboard(f *flight) {
	if f.onboardJob > 0 {
		c.tiers.jobs[f.onboardJob-1].live = false
		f.onboardJob = 0
	}
}

// tierResults are the run's per-tier totals, in tier order, for the tiers
// any instance has.
func (c *cluster) tierResults() []TierResult {
	if c.tiers.paths == nil {
		return nil
	}
	var out []TierResult
	for k := range engine.NumTiers {
		t := TierResult{Name: k.String()}
		tiers, links := map[*engine.Tier]bool{}, map[int32]bool{}
		for i := range c.replicas {
			rp := &c.replicas[i]
			st := rp.eng.Stats()
			for _, tr := range rp.cfg.Engine.Tiers {
				if tr.Kind != k {
					continue
				}
				t.WrittenBytes += float64(st.TierWrittenBlocks[k]) * tr.BlockBytes
				t.ReadBlocks += st.TierHitBlocks[k]
				if !tiers[tr] {
					tiers[tr] = true
					t.CapacityBlocks += int64(tr.Blocks.Capacity())
					t.CachedBlocks += int64(tr.Blocks.Len())
				}
				if l := c.tiers.paths[i][k][0]; !links[l] {
					links[l] = true
					t.ReadBytes += c.net.Stats(int(l)).Bytes
				}
			}
		}
		if len(tiers) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// TierResult is one kind of lower tier's totals over the instances that
// have it (a shared store once).
type TierResult struct {
	Name           string
	ReadBlocks     int64   // blocks onboarded from it (a hybrid model's: of every KV cache group)
	ReadBytes      float64 // bytes its read links carried
	WrittenBytes   float64 // bytes written to it
	CapacityBlocks int64
	CachedBlocks   int64 // at the end of the run
}
