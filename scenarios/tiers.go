package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/llm"
	"handoff/models/perf"
	"handoff/models/units"
	"handoff/sim"
)

// KVTier is one lower KV tier of a pool's instances, in a pool's
// kv_tiers list (HBM → host → disk → store). A host tier is host DRAM
// read over each device's PCIe link (bandwidths per device, by default the
// pcie-gen5-x16 link's); a disk tier a local drive (bandwidths per
// instance). A store entry names the scenario's kv_store, whose figures
// are there.
type KVTier struct {
	Tier           string          `yaml:"tier"`     // host | disk | store
	Capacity       units.Bytes     `yaml:"capacity"` // per instance
	ReadBandwidth  units.Bandwidth `yaml:"read_bandwidth,omitempty"`
	WriteBandwidth units.Bandwidth `yaml:"write_bandwidth,omitempty"`
	Latency        units.Duration  `yaml:"latency,omitempty"`
	Offload        string          `yaml:"offload,omitempty"` // completion (default) | eviction | both
}

// KVStore is a KV store shared over the network by the pools that list it
// (Mooncake Store, LMCache's remote backend): its capacity, and its
// aggregate read and write bandwidth, which all its readers and writers
// share.
type KVStore struct {
	Capacity       units.Bytes     `yaml:"capacity"`
	ReadBandwidth  units.Bandwidth `yaml:"read_bandwidth"`
	WriteBandwidth units.Bandwidth `yaml:"write_bandwidth"`
	Latency        units.Duration  `yaml:"latency,omitempty"`
	Offload        string          `yaml:"offload,omitempty"` // completion (default) | eviction | both
}

// offloads maps the scenario's offload names to the engine's modes.
var offloads = map[string]engine.Offload{"": engine.OffloadOnCompletion, "completion": engine.OffloadOnCompletion,
	"eviction": engine.OffloadOnEviction, "both": engine.OffloadOnCompletion | engine.OffloadOnEviction}

// kvHandoffs are how a prefill pool hands its KV off: the decoder pulls
// it (direct), or it goes through the kv_store.
var kvHandoffs = []string{"direct", "store"}

// tierKinds maps the tier names to the engine's kinds.
var tierKinds = map[string]engine.TierKind{"host": engine.TierHost, "disk": engine.TierDisk, "store": engine.TierStore}

// validateTiers checks a pool's kv_tiers: known names in the order HBM →
// host → disk → store, positive figures, a store the scenario defines.
func (l *Loaded) validateTiers(at string, p *Pool) error {
	for k, t := range p.KVTiers {
		tat := fmt.Sprintf("%s.kv_tiers[%d]", at, k)
		kind, ok := tierKinds[t.Tier]
		switch {
		case !ok:
			return l.errorf(tat+".tier", "unknown tier %q: want host, disk or store", t.Tier)
		case k > 0 && kind <= tierKinds[p.KVTiers[k-1].Tier]:
			return l.errorf(tat+".tier", "tiers run HBM → host → disk → store: %s cannot follow %s", t.Tier,
				p.KVTiers[k-1].Tier)
		case kind == engine.TierStore && l.KVStore == nil:
			return l.errorf(tat+".tier", "the pool reads a store the scenario does not define (add kv_store)")
		case kind == engine.TierStore && t != (KVTier{Tier: "store"}):
			return l.errorf(tat, "a store's figures are the scenario's kv_store's: list it as {tier: store} alone")
		case kind == engine.TierStore:
			continue
		case !(t.Capacity > 0):
			return l.errorf(tat+".capacity", "a tier's capacity must be positive")
		case t.ReadBandwidth < 0 || t.WriteBandwidth < 0 || t.Latency < 0:
			return l.errorf(tat+".read_bandwidth", "bandwidths and latency must not be negative")
		case kind == engine.TierDisk && (t.ReadBandwidth == 0 || t.WriteBandwidth == 0):
			return l.errorf(tat+".read_bandwidth", "a disk tier needs its read_bandwidth and write_bandwidth")
		}
		if _, ok := offloads[t.Offload]; !ok {
			return l.errorf(tat+".offload", "unknown offload %q: want completion, eviction or both", t.Offload)
		}
	}
	switch {
	case !slices.Contains(kvHandoffs, p.KVHandoff):
		return l.errorf(at+".kv_handoff", "unknown handoff %q: want %s", p.KVHandoff, strings.Join(kvHandoffs, " or "))
	case p.KVHandoff != "store":
	case p.Role != "prefill":
		return l.errorf(at+".kv_handoff", "only a prefill pool hands its KV off")
	case !slices.ContainsFunc(p.KVTiers, func(t KVTier) bool { return t.Tier == "store" }):
		return l.errorf(at+".kv_handoff", "a handoff through the store needs {tier: store} in kv_tiers")
	case p.KVHold != nil:
		return l.errorf(at+".kv_hold", "a pool handing off through the store frees its KV when the store has it: drop kv_hold")
	}
	if len(p.KVTiers) > 0 && p.Engine.PrefixCaching != nil && !*p.Engine.PrefixCaching {
		return l.errorf(at+".kv_tiers", "lower KV tiers find blocks by their prefix hashes: they need engine.prefix_caching")
	}
	if len(p.KVTiers) > 0 && p.Wafer != nil {
		return l.errorf(at+".kv_tiers", "a wafer's slots have no paged pool to offload from")
	}
	if len(p.KVTiers) > 0 && p.StreamKV {
		return l.errorf(at+".kv_tiers", "a pool with lower KV tiers cannot stream its KV layer by layer (stream_kv)")
	}
	return nil
}

// validateStore checks the scenario's kv_store and that a pool reaches it.
func (l *Loaded) validateStore() error {
	s := l.KVStore
	if s == nil {
		return nil
	}
	switch {
	case !(s.Capacity > 0):
		return l.errorf("kv_store.capacity", "the store's capacity must be positive")
	case !(s.ReadBandwidth > 0):
		return l.errorf("kv_store.read_bandwidth", "the store's read bandwidth must be positive")
	case !(s.WriteBandwidth > 0):
		return l.errorf("kv_store.write_bandwidth", "the store's write bandwidth must be positive")
	case s.Latency < 0:
		return l.errorf("kv_store.latency", "the store's latency must not be negative")
	}
	if _, ok := offloads[s.Offload]; !ok {
		return l.errorf("kv_store.offload", "unknown offload %q: want completion, eviction or both", s.Offload)
	}
	for _, p := range l.Pools {
		for _, t := range p.KVTiers {
			if t.Tier == "store" {
				return nil
			}
		}
	}
	return l.errorf("kv_store", "no pool reaches the store: list {tier: store} in a pool's kv_tiers")
}

// poolTiers is a template of a pool's lower tiers: blockBytes is one
// block's KV over all the instance's devices. Each instance gets its own
// copies of the host and disk tiers (instanceTiers); the store is shared.
func (l *Loaded) poolTiers(at string, p *Pool, hw *hardware.Catalog, m *llm.Model, blockBytes float64,
	store **engine.Tier) ([]*engine.Tier, error) {
	var tiers []*engine.Tier
	devices := float64(p.layout().RankDevices())
	for k, t := range p.KVTiers {
		kind := tierKinds[t.Tier]
		if kind == engine.TierStore {
			if *store == nil {
				*store = newTier(kind, l.KVStore.Capacity, float64(l.KVStore.ReadBandwidth),
					float64(l.KVStore.WriteBandwidth), l.KVStore.Latency, l.KVStore.Offload, blockBytes)
			}
			if (*store).BlockBytes != blockBytes {
				return nil, l.errorf(fmt.Sprintf("%s.kv_tiers[%d].tier", at, k), "the pools sharing the store must "+
					"hold the same KV per block (%.4g MB here, %.4g MB in another): match block_size and the KV format",
					blockBytes/1e6, (*store).BlockBytes/1e6)
			}
			tiers = append(tiers, *store)
			continue
		}
		read, write, latency := float64(t.ReadBandwidth), float64(t.WriteBandwidth), t.Latency
		if kind == engine.TierHost {
			link, err := hw.Link(defaultHostLink)
			if err != nil {
				return nil, l.errorf(fmt.Sprintf("%s.kv_tiers[%d].read_bandwidth", at, k), "%v", err)
			}
			read, write = orDefault(read, link.BandwidthBps)*devices, orDefault(write, link.BandwidthBps)*devices
			if latency == 0 {
				latency = units.Duration(link.LatencyNs)
			}
		}
		tr := newTier(kind, t.Capacity, read, write, latency, t.Offload, blockBytes)
		if tr.Blocks.Capacity() < 1 {
			return nil, l.errorf(fmt.Sprintf("%s.kv_tiers[%d].capacity", at, k),
				"%s holds no block of %.3g MB", t.Capacity, blockBytes/1e6)
		}
		tiers = append(tiers, tr)
	}
	return tiers, nil
}

// newTier builds one tier of capacity bytes.
func newTier(kind engine.TierKind, capacity units.Bytes, readBps, writeBps float64, latency units.Duration,
	offload string, blockBytes float64) *engine.Tier {
	blocks := max(1, int(float64(capacity)/blockBytes))
	return &engine.Tier{Kind: kind, Blocks: kv.NewTier(kind.String(), blocks), Offload: offloads[offload],
		WriteNsPerBlock: blockBytes / writeBps * 1e9, BlockBytes: blockBytes, ReadBps: readBps,
		ReadLatencyNs: int64(latency)}
}

// instanceTiers gives one instance its own host and disk tiers, empty,
// and the pool's shared store.
func instanceTiers(tmpl []*engine.Tier) []*engine.Tier {
	if len(tmpl) == 0 {
		return nil
	}
	out := make([]*engine.Tier, len(tmpl))
	for i, t := range tmpl {
		if t.Kind == engine.TierStore {
			out[i] = t
			continue
		}
		c := *t
		c.Blocks = kv.NewTier(t.Kind.String(), t.Blocks.Capacity())
		out[i] = &c
	}
	return out
}

// applyTiers sets a pool's lower tiers on its engine configuration; a
// swap pool with a host tier swaps into it, each block's copy priced over
// the host link as the swap space's.
func (l *Loaded) applyTiers(at string, p *Pool, hw *hardware.Catalog, m *llm.Model, ecfg *engine.Config,
	inst *sim.Instance, store **engine.Tier) error {
	if len(p.KVTiers) == 0 {
		return nil
	}
	if ecfg.SlidingGroups > 0 {
		if err := l.hybridTiers(at, p, m); err != nil {
			return err
		}
	}
	shardBytes := p.layout().Memory(m, 0, 0, ecfg.BlockSize).BlockBytes
	tiers, err := l.poolTiers(at, p, hw, m, rankBlockBytes(p, m, ecfg.BlockSize), store)
	if err != nil {
		return err
	}
	ecfg.Tiers = tiers
	inst.KVViaStore = p.KVHandoff == "store"
	if host := ecfg.Tiers[0]; host.Kind == engine.TierHost && ecfg.Preemption == engine.Swap {
		perDevice := host.ReadBps / float64(p.layout().RankDevices())
		inst.Timer = perf.WithSwap(inst.Timer, shardBytes/perDevice*1e9)
	}
	return nil
}

// hybridTiers checks the lower tiers of pool p (at "pools[i]"), which
// serves m, a model with sliding-window layers: its vLLM release must
// offload a hybrid model's KV cache groups, and a tier must take blocks
// as sequences finish, the only way its sliding-window blocks go down
// (HBM's evictions carry full-attention blocks only).
func (l *Loaded) hybridTiers(at string, p *Pool, m *llm.Model) error {
	if err := engine.CheckHybridTiers(p.release().Version); err != nil {
		return l.errorf(at+".engine.vllm", "%s has sliding-window layers: %v", m.Name, err)
	}
	for _, t := range p.KVTiers {
		offload := t.Offload
		if t.Tier == "store" {
			offload = l.KVStore.Offload
		}
		if offloads[offload]&engine.OffloadOnCompletion != 0 {
			return nil
		}
	}
	return l.errorf(at+".kv_tiers", "%s has sliding-window layers, whose blocks go down a tier only as a sequence "+
		"finishes: give a tier offload: completion or both", m.Name)
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}
