package scenarios

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/network"
	"handoff/models/parallel"
	"handoff/models/perf"
	"handoff/models/strictyaml"
	"handoff/results"
	"handoff/scenarios/workload"
	"handoff/sim"
)

// Built is a scenario turned into a simulator configuration, with the
// resolved catalog entries a report may want and the files to close.
type Built struct {
	Config          *sim.Config
	Model           *llm.Model
	GPUs            int               // devices in the fleet, of every kind (GPUs, Trainium chips, wafers)
	Device          string            // what they are called: one kind's noun ("GPU", "wafer"), or "device" for a mix (hardware.JoinNouns)
	CostPerHour     float64           // USD per hour: Σ over pools of count × tp × the accelerator's cost_per_hour
	PoolCostPerHour []float64         // the same per pool, in scenario order
	PoolDevices     []int             // devices one instance of each pool occupies (dp × tp; wafers), in scenario order
	PoolEngines     map[string]string // the engine each pool runs, by pool name: kind and release ("vllm 0.33", "sglang")
	TransferOwner   string            // who answers for transfer time ("nobody" unless a pool claims it)
	RouterOwner     string            // who answers for router queueing
	Warnings        []string          // for the user (deprecated fields), one line each
	Classes         []results.Class   // the workload's traffic classes with their SLOs (classes.go); nil: none
	closers         []io.Closer
	store           *engine.Tier // the shared KV store, once a pool reads it
}

// Close releases the workload's open files.
func (b *Built) Close() error {
	var first error
	for _, c := range b.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Build resolves the scenario against the catalogs and returns a runnable
// configuration. seed overrides the scenario's seed when non-zero.
func (l *Loaded) Build() (*Built, error) {
	hw, models, err := l.catalogs()
	if err != nil {
		return nil, err
	}
	m, err := l.model(models)
	if err != nil {
		return nil, err
	}
	b := &Built{Model: m, Config: &sim.Config{Name: l.Name, Seed: l.Seed, KVBytesPerToken: m.KVBytesPerToken(),
		LockupThresholdNs: int64(l.Metrics.LockupThreshold), LockupAbortNs: int64(l.Metrics.LockupAbort),
		SLO: results.SLO{TTFTNs: int64(l.SLO.TTFT), TPOTNs: int64(l.SLO.TPOT), Attainment: l.SLO.Attainment}}}
	if err := l.checkKVFormats(m); err != nil {
		return nil, err
	}
	if err := l.checkKVLayouts(m); err != nil {
		return nil, err
	}
	if err := l.checkSpeculativePairs(); err != nil {
		return nil, err
	}
	for i := range l.Pools {
		if err := l.buildPool(b, i, hw, m); err != nil {
			return nil, err
		}
	}
	b.Config.Frontend = l.frontend(hw)
	b.Config.ProxyNs = 2 * int64(l.Gateway.Hop) // a P/D request's two calls through the proxy
	b.Config.Client = sim.Client{TimeoutNs: int64(l.Workload.Client.Timeout),
		FirstTokenTimeoutNs: int64(l.Workload.Client.FirstTokenTimeout), Concurrency: l.Workload.Client.Concurrency,
		ThinkNs: int64(l.Workload.Client.ThinkTime), Requests: l.Workload.Client.Requests}
	if err := l.buildNetwork(b, hw); err != nil {
		return nil, err
	}
	streams := sim.NewStreams(l.Seed)
	l.buildRouter(b, streams.Stream("router"))
	if b.TransferOwner, b.RouterOwner, err = l.owners(); err != nil {
		return nil, err
	}
	src, err := l.buildSource(b, streams)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.Config.Source = src
	if err := l.buildFleet(b); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// buildPool adds a pool's instances.
func (l *Loaded) buildPool(b *Built, i int, hw *hardware.Catalog, m *llm.Model) error {
	p := &l.Pools[i]
	at := fmt.Sprintf("pools[%d]", i)
	dev, err := hw.Accelerator(p.Hardware)
	if err != nil {
		return l.errorf(at+".hardware", "%s", strings.TrimPrefix(err.Error(), "hardware: "))
	}
	m, compute, err := l.poolModel(at, p, dev, m)
	if err != nil {
		return err
	}
	if err := l.checkLayout(at, p, dev, m); err != nil {
		return err
	}
	if err := l.checkPipeline(at, p, dev); err != nil {
		return err
	}
	ecfg, timer, err := l.poolEngine(at, p, hw, dev, m, compute)
	if err != nil {
		return err
	}
	if err := l.applySpeculative(at, p, m, &ecfg); err != nil {
		return err
	}
	role := map[string]sim.Role{"colocated": sim.RoleColocated, "prefill": sim.RolePrefill, "decode": sim.RoleDecode}[p.Role]
	tmpl := sim.Instance{Pool: p.Name, Owner: p.Owner, Role: role, GPUs: p.layout().RankDevices(), Timer: timer}
	if pipe, ok := timer.(*perf.Pipeline); ok {
		tmpl.Pipeline = pipe
	}
	km := kvModel(p, m) // what its KV blocks hold: the step time still prices m's attention
	if err := l.applyPolicy(at, p, hw, km, &ecfg, &tmpl); err != nil {
		return err
	}
	if err := l.applyTiers(at, p, hw, km, &ecfg, &tmpl, &b.store); err != nil {
		return err
	}
	if p.Wafer != nil {
		applyWafer(p, dev, &tmpl)
	}
	if role == sim.RoleDecode {
		tmpl.KVIn = kvIn(km, p)
	}
	// Every instance that decodes sends its tokens back through its own
	// serving stack (wafers too: their accelerator's Serving), and a
	// prefiller its one-token response; a decoder's API server takes a
	// P/D request's decode leg.
	tmpl.FirstEmitNs, tmpl.FinalEmitNs = roundNs(dev.Serving.FirstEmitNs), roundNs(dev.Serving.FinalEmitNs)
	tmpl.Frontend = sim.Frontend{LatencyNs: roundNs(dev.Serving.FrontendNs), TokenizeNsPerToken: dev.Serving.TokenizeNsPerToken}
	tmpl.Engine = ecfg
	if err := l.dpRanks(at, p, &tmpl); err != nil {
		return err
	}
	addInstances(b, p, dev, &tmpl)
	return nil
}

// addInstances appends the pool's instances, each rank of each a copy of
// tmpl with its own lower tiers, and counts their devices and cost.
func addInstances(b *Built, p *Pool, dev hardware.Accelerator, tmpl *sim.Instance) {
	for k := range p.instances() {
		for r := range p.DP {
			inst := *tmpl
			inst.Name, inst.DPRank = fmt.Sprintf("%s-%d", p.Name, k), r
			inst.Engine.Tiers = instanceTiers(tmpl.Engine.Tiers)
			if p.DP > 1 {
				inst.Name += fmt.Sprintf("-dp%d", r)
			}
			b.Config.Instances = append(b.Config.Instances, inst)
		}
	}
	b.GPUs += p.Count * p.devices()
	b.Device = hardware.JoinNouns(b.Device, dev.Kind.Noun())
	cost := float64(p.Count*p.devices()) * dev.CostPerHour
	b.CostPerHour += cost
	b.PoolCostPerHour = append(b.PoolCostPerHour, cost)
	b.PoolDevices = append(b.PoolDevices, p.devices())
	if b.PoolEngines == nil {
		b.PoolEngines = map[string]string{}
	}
	b.PoolEngines[p.Name] = p.engineName()
}

// poolEngine builds a pool's engine configuration and step timer: slot
// mode and the wafer model for wafer hardware (wafer.go), a paged pool
// otherwise.
func (l *Loaded) poolEngine(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator,
	m *llm.Model, compute string) (engine.Config, perf.StepTimer, error) {
	if err := l.checkWaferKind(at, p, dev); err != nil {
		return engine.Config{}, nil, err
	}
	if err := l.checkKindHardware(at, p, dev); err != nil {
		return engine.Config{}, nil, err
	}
	if p.Wafer != nil {
		return l.waferEngine(at, p, hw, dev, m)
	}
	ecfg, err := l.engineConfig(at, p, dev, kvModel(p, m))
	if err != nil {
		return ecfg, nil, err
	}
	timer, err := l.stepTimer(at, p, hw, dev, m, compute)
	return ecfg, timer, err
}

// maxBlocks bounds one instance's KV pool, whose bookkeeping takes about 30
// bytes a block: 2^24 blocks are 256M tokens at the default block size.
const maxBlocks = 1 << 24

// engineConfig sizes the KV pool of one data-parallel rank from the
// memory each of its devices has left after its share of the weights
// (parallel.Layout.Memory) and sets the engine limits.
func (l *Loaded) engineConfig(at string, p *Pool, dev hardware.Accelerator, m *llm.Model) (engine.Config, error) {
	e := p.Engine
	mem := p.layout().Memory(m, dev.MemoryBytes, e.MemoryUtilization, e.BlockSize)
	if mem.Budget >= 0 && mem.Budget < mem.BlockBytes {
		return engine.Config{}, l.errorf(at+".engine.block_size", "one KV block of %d tokens (%.3g GB per rank) does not fit "+
			"in the %.3g GB per device left after the weights", e.BlockSize, mem.BlockBytes/1e9, mem.Budget/1e9)
	}
	if mem.Budget < mem.BlockBytes {
		return engine.Config{}, l.errorf(at+".tp", "%s (%.1f GB of weights, %.1f GB per rank at %s) does not fit in %s "+
			"at memory_utilization %g (%.1f GB usable per device): raise tp or choose larger hardware",
			m.Name, m.WeightBytesTotal()/1e9, mem.WeightBytes/1e9, p.layout().Describe(), dev.Name, e.MemoryUtilization,
			dev.MemoryBytes*e.MemoryUtilization/1e9)
	}
	blocks := mem.Blocks
	if !(blocks <= maxBlocks) {
		return engine.Config{}, l.errorf(at+".engine.block_size", "%.3g KV blocks per instance exceed the limit of %d: "+
			"raise block_size or lower memory_utilization", blocks, maxBlocks)
	}
	maxLen := m.MaxContext
	if e.MaxModelLen > 0 {
		maxLen = e.MaxModelLen
	}
	cfg := engine.Config{MaxBatchedTokens: e.MaxNumBatchedTokens, MaxSeqs: e.MaxNumSeqs, BlockSize: e.BlockSize,
		NumBlocks: int(blocks), MaxModelLen: maxLen, PrefixCaching: *e.PrefixCaching,
		NoChunkedPrefill: !*e.ChunkedPrefill, AsyncScheduling: *e.AsyncScheduling && p.PP <= 1, Stages: p.PP,
		Rules: engineRules(&e), KVConsumer: p.Role == "decode" || len(p.KVTiers) > 0, Scheduling: e.SchedulingPolicy}
	cfg.WatermarkBlocks = int(*e.Watermark * float64(cfg.NumBlocks)) // vLLM: int(watermark × num_gpu_blocks)
	if g := m.KVGroups(); g.Sliding > 0 {
		cfg.SlidingWindow, cfg.SlidingGroups = m.SlidingWindow, g.Sliding
	}
	if err := cfg.Validate(); err != nil {
		return cfg, l.errorf(at+".engine", "%v", err)
	}
	return cfg, nil
}

// stepTimer builds the pool's step-time model from its registered Spec:
// with pp > 1, its pipeline of stages (pipeline.go).
func (l *Loaded) stepTimer(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator, m *llm.Model,
	compute string) (perf.StepTimer, error) {
	if p.PP > 1 {
		return l.pipelineTimer(at, p, hw, dev, m, compute)
	}
	return l.stepTimerFor(at, p, hw, dev, m, compute, p.layout())
}

// stepTimerFor builds the pool's step-time model for model m spread by
// layout lay: the whole model, or one pipeline stage of it.
func (l *Loaded) stepTimerFor(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator, m *llm.Model,
	compute string, lay parallel.Layout) (perf.StepTimer, error) {
	env := perf.Env{Model: m, Device: dev, Layout: lay, Compute: compute, OverlapCPU: *p.Engine.AsyncScheduling,
		Release: p.release().Version,
		Open: func(name string) (io.ReadCloser, string, error) {
			f, err := l.open(at+".step_time.file", name)
			return f, l.Resolve(name), err
		}}
	if lay.Devices() > 1 {
		link, err := hw.Link(dev.ScaleUpLink)
		if err != nil {
			return nil, l.errorf(at+".hardware", "scale-up link of %s: %v", dev.Name, err)
		}
		env.ScaleUp = link
	}
	env.Domain = dev.ScaleUpDomain
	if l.Topology != nil {
		env.Domain = l.Topology.DomainSize
	}
	if out := l.scaleOut(dev); out != "" && p.DP > 1 {
		link, err := hw.Link(out)
		if err != nil {
			return nil, l.errorf(at+".hardware", "scale-out link of %s: %v", dev.Name, err)
		}
		env.ScaleOut = link
	}
	t, err := stepTimeSpec(&p.StepTime).New(env)
	var fe *strictyaml.FieldError
	if err != nil && !(errors.As(err, &fe) && fe.File != "") {
		err = l.errorf(at+".step_time", "%v", err)
	}
	if err != nil {
		return t, err
	}
	return l.drafted(at, p, env, t)
}

// open opens a file named at a scenario field.
func (l *Loaded) open(field, name string) (*os.File, error) {
	if name == "" {
		return nil, l.errorf(field, "required")
	}
	f, err := os.Open(l.Resolve(name))
	if err != nil {
		return nil, l.errorf(field, "%v", err)
	}
	return f, nil
}

// buildNetwork joins the instances with the scenario's topology or, by
// default, its single link kind.
func (l *Loaded) buildNetwork(b *Built, hw *hardware.Catalog) error {
	if l.Topology != nil {
		return l.buildHierarchy(b, hw)
	}
	link, err := hw.Link(l.Link.Kind)
	if err != nil {
		return l.errorf("link.kind", "%s", strings.TrimPrefix(err.Error(), "hardware: "))
	}
	if l.Link.Bandwidth > 0 {
		link.BandwidthBps = float64(l.Link.Bandwidth)
	}
	if l.Link.Latency != nil {
		link.LatencyNs = int64(*l.Link.Latency)
	}
	names, devices := make([]string, len(b.Config.Instances)), make([]int, len(b.Config.Instances))
	for i, in := range b.Config.Instances {
		names[i], devices[i] = in.Name, in.GPUs
	}
	b.Config.Topology = network.NewNICTopology(link, names, devices)
	return nil
}

// buildSource opens the workload and applies the rate scale.
func (l *Loaded) buildSource(b *Built, streams sim.Streams) (sim.Source, error) {
	w := l.Workload
	var src sim.Source
	var err error
	at := "workload.trace"
	switch {
	case w.Synthetic != nil:
		at = "workload.synthetic"
		src, err = workload.NewSynthetic(*w.Synthetic, streams.Stream("workload"))
	case w.SharedPrefix != nil:
		at = "workload.shared_prefix"
		src, err = workload.NewSharedPrefix(*w.SharedPrefix, streams.Stream("workload"))
	case w.ServeGen != nil:
		at = "workload.servegen"
		src, err = l.serveGenSource(w.ServeGen, streams)
	case w.Sessions != nil:
		at = "workload.sessions"
		src, err = workload.NewSessions(*w.Sessions, streams.Stream("workload"))
	default:
		src, err = l.traceSource(b, w.Trace, streams)
	}
	if err != nil {
		return nil, l.locate(at, err)
	}
	src = l.buildClasses(b, src, streams)
	if w.RateScale != 1 {
		src = workload.Scale(src, w.RateScale)
	}
	return src, nil
}

// traceSource opens the trace; what its format leaves to the scenario (a
// ShareGPT file's arrivals) draws from the workload stream.
func (l *Loaded) traceSource(b *Built, t *workload.Trace, streams sim.Streams) (sim.Source, error) {
	f, err := l.open("workload.trace.path", t.Path)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, f)
	name := l.Resolve(t.Path) // trace errors name the file as the user can open it
	return t.Open(f, name, streams.Stream("workload")), nil
}

// serveGenSource reads each ServeGen client's two files and generates
// from them, merging several clients (and copies of them) in arrival
// order; the first client draws from the workload stream, source i > 0
// (copy k of client j is source k·clients + j) from its own.
func (l *Loaded) serveGenSource(g *workload.ServeGen, streams sim.Streams) (sim.Source, error) {
	var srcs []sim.Source
	clients := g.Clients()
	for k := range max(g.Copies, 1) {
		for j, path := range clients {
			stream, field := "workload", "workload.servegen.path"
			if len(g.Paths) > 0 {
				field = fmt.Sprintf("workload.servegen.paths[%d]", j)
			}
			if i := k*len(clients) + j; i > 0 {
				stream = fmt.Sprintf("workload.servegen.%d", i)
			}
			src, err := l.serveGenClient(field, path, streams.Stream(stream), g.Windows)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, src)
		}
	}
	return workload.Limit(workload.Merge(srcs...), g.Limit), nil
}

// serveGenClient reads one ServeGen client's two files.
func (l *Loaded) serveGenClient(field, path string, rng *rand.Rand, windows []int) (sim.Source, error) {
	trace, err := l.open(field, path+"-trace.csv")
	if err != nil {
		return nil, err
	}
	defer trace.Close()
	dataset, err := l.open(field, path+"-dataset.json")
	if err != nil {
		return nil, err
	}
	defer dataset.Close()
	return workload.NewServeGen(trace, dataset, l.Resolve(path+"-trace.csv"), rng, windows...)
}

// frontend is the cluster's front end: the serving costs of the accelerator
// of the pool that takes arrivals — the first colocated or prefill pool
// (its API server parses and tokenizes every request). Build has resolved
// every pool's hardware before.
func (l *Loaded) frontend(hw *hardware.Catalog) sim.Frontend {
	for i := range l.Pools {
		if l.Pools[i].Role == "decode" {
			continue
		}
		dev, err := hw.Accelerator(l.Pools[i].Hardware)
		if err != nil {
			return sim.Frontend{}
		}
		return sim.Frontend{LatencyNs: roundNs(dev.Serving.FrontendNs) + int64(l.Gateway.Latency),
			TokenizeNsPerToken: dev.Serving.TokenizeNsPerToken}
	}
	return sim.Frontend{LatencyNs: int64(l.Gateway.Latency)}
}

// roundNs rounds a duration in ns to whole ns.
func roundNs(ns float64) int64 { return int64(math.Round(ns)) }
