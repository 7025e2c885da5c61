package engine

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"handoff/models/internal/script"
	"handoff/models/kv"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the engine's behaviour scripts in testdata, the format
// of the kv package's: a command line, a "----" line, and the expected
// output up to a blank line; lines starting with # are comments. Every
// script runs twice, with cruising on and off, and must print the same
// either way. Commands:
//
//	new blocks=N budget=T seqs=M [size=B] [maxlen=L] [nocache] [nochunk] [async] [shared]
//	    [full] [reserve] [defer] [wait] [watermark=N] (Rules; defer makes it a KV consumer)
//	    [policy=recompute|swap|reject] [sched=fcfs|priority] [host=H] [window=W groups=G] [tier=N] (a host tier of N
//	    blocks, written on completion)
//	    [slots=CxT,CxT;CxT,... pressure=queue|reject|recompile]   a fresh instance
//	add NAME prompt=P out=O [prefix=ID:TOKENS,...] [output=ID:TOKENS] [remote] [hold] [threshold=F] [prio=N]
//	                    enqueue a sequence at the current time (prefix tokens from shared segments,
//	                    output tokens from a named segment)
//	step [n=K]          K times: Schedule, print the batch and the result, Complete (10ns later), print its result
//	wait NS             advance the clock with the instance idle
//	arrive NAME | lost NAME | release NAME | abort NAME | onboarded NAME (its copies up are done)
//	recompiled          end a recompile pause
//	state               print the queues, each sequence's tokens and blocks, the pool and the tier
//
// state first brings every cruising sequence up to date (as any step may),
// so the sequences' fields it prints are current.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			lazy := runScript(t, f, false)
			if eager := runScript(t, f, true); eager != lazy {
				t.Errorf("%s: cruising and eager runs differ:\n%s\n----- eager:\n%s", f, lazy, eager)
			}
		})
	}
}

// runScript runs one script and returns its output; it checks it against
// the file (or rewrites the file) when cruising.
func runScript(t *testing.T, path string, noCruise bool) string {
	s := &engineScript{t: t, path: path, noCruise: noCruise}
	return script.Run(t, path, !noCruise, *rewrite, func(lineNo int, cmd string) string {
		s.line = lineNo
		return s.run(cmd)
	})
}

// engineScript is the interpreter state of one script.
type engineScript struct {
	t        *testing.T
	path     string
	line     int
	noCruise bool
	in       *Instance
	seqs     map[string]*Seq
	names    []string // by Seq.Ref
	nowNs    int64
}

func (e *engineScript) fail(format string, args ...any) {
	e.t.Helper()
	e.t.Fatalf("%s:%d: "+format, append([]any{e.path, e.line}, args...)...)
}

// args splits key=value words; a bare word maps to "".
func args(words []string) map[string]string {
	m := map[string]string{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		m[k] = v
	}
	return m
}

func (e *engineScript) atoi(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		e.fail("%v", err)
	}
	return n
}

func (e *engineScript) run(line string) string {
	f := strings.Fields(line)
	if f[0] != "new" && e.in == nil {
		e.fail("%s before new", f[0])
	}
	var out string
	switch f[0] {
	case "new":
		e.newInstance(args(f[1:]))
	case "add":
		e.add(f[1], args(f[2:]))
	case "step":
		n := 1
		if v, ok := args(f[1:])["n"]; ok {
			n = e.atoi(v)
		}
		for range n {
			out += e.step()
		}
	case "wait":
		e.nowNs += int64(e.atoi(f[1]))
	case "arrive", "lost", "release", "abort", "onboarded":
		e.handle(f[0], e.seq(f[1]))
	case "recompiled":
		e.in.Recompiled()
	case "state":
		out = e.state()
	default:
		e.fail("unknown command %q", f[0])
	}
	if err := e.in.Pool().Check(); err != nil {
		e.fail("%v", err)
	}
	return out
}

func (e *engineScript) seq(name string) *Seq {
	s, ok := e.seqs[name]
	if !ok {
		e.fail("no sequence %q", name)
	}
	return s
}

func (e *engineScript) handle(cmd string, s *Seq) {
	switch cmd {
	case "arrive":
		e.in.KVArrived(s, e.nowNs)
	case "lost":
		e.in.KVLost(s, e.nowNs)
	case "release":
		e.in.Release(s)
	case "abort":
		e.in.Abort(s)
	case "onboarded":
		e.in.Onboarded(s, e.nowNs)
	}
}

func (e *engineScript) newInstance(a map[string]string) {
	cfg := Config{MaxModelLen: 1 << 20, BlockSize: 4, PrefixCaching: true, RecompileNs: 1}
	_, cfg.NoChunkedPrefill = a["nochunk"]
	_, cfg.AsyncScheduling = a["async"]
	_, cfg.SharedQueue = a["shared"]
	if _, ok := a["full"]; ok {
		cfg.Admission = FullSequence
	}
	_, cfg.ReserveInflight = a["reserve"]
	_, cfg.DeferFrees = a["defer"]
	cfg.KVConsumer = cfg.DeferFrees
	if _, ok := a["wait"]; ok {
		cfg.FencedVictim = Wait
	}
	if _, ok := a["nocache"]; ok {
		cfg.PrefixCaching = false
	}
	for k, v := range a {
		switch k {
		case "blocks":
			cfg.NumBlocks = e.atoi(v)
		case "budget":
			cfg.MaxBatchedTokens = e.atoi(v)
		case "seqs":
			cfg.MaxSeqs = e.atoi(v)
		case "size":
			cfg.BlockSize = e.atoi(v)
		case "maxlen":
			cfg.MaxModelLen = e.atoi(v)
		case "host":
			cfg.HostBlocks = e.atoi(v)
		case "watermark":
			cfg.WatermarkBlocks = e.atoi(v)
		case "window":
			cfg.SlidingWindow = e.atoi(v)
		case "groups":
			cfg.SlidingGroups = e.atoi(v)
		case "policy":
			cfg.Preemption = Policy(e.enum(v, "recompute", "swap", "reject"))
		case "sched":
			cfg.Scheduling = v
		case "kind": // sglang, trtllm (GUARANTEED_NO_EVICT) or trtllm:first_chunk (MAX_UTILIZATION)
			name, admission, _ := strings.Cut(v, ":")
			k, err := ParseKind(name)
			if err != nil {
				e.fail("%v", err)
			}
			r, err := Preset(k, admission)
			if err != nil {
				e.fail("%v", err)
			}
			cfg.Admission, cfg.Retract = r.Rules.Admission, r.Rules.Retract
		case "pressure":
			cfg.Pressure = Pressure(e.enum(v, "queue", "reject", "recompile"))
		case "slots":
			cfg.Layouts = e.layouts(v)
		case "tier":
			cfg.Tiers = []*Tier{{Kind: TierHost, Blocks: kv.NewTier("host", e.atoi(v)), Offload: OffloadOnCompletion}}
		}
	}
	if err := cfg.Validate(); err != nil {
		e.fail("%v", err)
	}
	e.in = New(cfg)
	e.in.noCruise = e.in.noCruise || e.noCruise // some rules never cruise (New)
	e.seqs, e.names, e.nowNs = map[string]*Seq{}, nil, 0
}

func (e *engineScript) enum(v string, names ...string) int {
	for i, n := range names {
		if v == n {
			return i
		}
	}
	e.fail("%q is none of %v", v, names)
	return 0
}

// layouts parses "2x100,1x400;1x1000": layouts split by ';', classes by ','.
func (e *engineScript) layouts(v string) [][]SlotClass {
	var ls [][]SlotClass
	for _, l := range strings.Split(v, ";") {
		var classes []SlotClass
		for _, c := range strings.Split(l, ",") {
			n, tokens, _ := strings.Cut(c, "x")
			classes = append(classes, SlotClass{Count: e.atoi(n), ContextTokens: e.atoi(tokens)})
		}
		ls = append(ls, classes)
	}
	return ls
}

func (e *engineScript) add(name string, a map[string]string) {
	if _, dup := e.seqs[name]; dup {
		e.fail("sequence %q exists", name)
	}
	s := e.in.NewSeq()
	s.Ref, s.UniqueID = int32(len(e.names)), uint64(1000+len(e.names))
	s.PromptTokens, s.MaxNew = e.atoi(a["prompt"]), e.atoi(a["out"])
	_, s.Remote = a["remote"]
	_, s.Hold = a["hold"]
	if v, ok := a["prio"]; ok {
		s.Priority = int32(e.atoi(v))
	}
	if v, ok := a["threshold"]; ok {
		th, err := strconv.ParseFloat(v, 64)
		if err != nil {
			e.fail("%v", err)
		}
		s.CacheHitThreshold = th
	}
	if v, ok := a["prefix"]; ok {
		for _, seg := range strings.Split(v, ",") {
			s.Prefix = append(s.Prefix, e.segment(seg))
		}
	}
	if v, ok := a["output"]; ok {
		s.Output = e.segment(v)
	}
	e.seqs[name] = s
	e.names = append(e.names, name)
	e.in.Enqueue(s, e.nowNs)
}

// segment parses "ID:TOKENS".
func (e *engineScript) segment(v string) kv.Segment {
	id, tokens, _ := strings.Cut(v, ":")
	return kv.Segment{ID: uint64(e.atoi(id)), Tokens: e.atoi(tokens)}
}

// step plans, prints, and completes one step 10ns long.
func (e *engineScript) step() string {
	var b strings.Builder
	batch, res := e.in.Schedule(e.nowNs)
	fmt.Fprintf(&b, "t=%d schedule:", e.nowNs)
	if batch == nil {
		b.WriteString(" idle")
	} else {
		fmt.Fprintf(&b, " prefill=%d/%dtok decode=%d/%dctx", batch.PrefillSeqs, batch.PrefillTokens,
			batch.DecodeSeqs, batch.DecodeContext)
		if batch.SwapBlocks > 0 {
			fmt.Fprintf(&b, " swap=%d", batch.SwapBlocks)
		}
	}
	b.WriteString(e.result(res) + "\n")
	if batch == nil {
		return b.String()
	}
	start := e.nowNs
	e.nowNs += 10
	res = e.in.Complete(start, e.nowNs)
	fmt.Fprintf(&b, "t=%d complete:%s", e.nowNs, e.result(res))
	if e.in.RecompileDue() {
		b.WriteString(" recompile-due")
	}
	return b.String() + "\n"
}

// result lists a StepResult's sequences by kind.
func (e *engineScript) result(r *StepResult) string {
	var b strings.Builder
	for _, l := range []struct {
		name string
		seqs []*Seq
	}{{"first", r.FirstTokens}, {"finished", r.Finished}, {"preempted", r.Preempted}, {"pulls", r.Pulls},
		{"rejected", r.Rejected}, {"final", r.FinalChunks}, {"recovered", r.Recovered}, {"onboards", r.Onboards}} {
		if len(l.seqs) > 0 {
			fmt.Fprintf(&b, " %s=%s", l.name, e.list(l.seqs))
		}
	}
	return b.String()
}

func (e *engineScript) list(seqs []*Seq) string {
	var names []string
	for _, s := range seqs {
		names = append(names, e.names[s.Ref])
	}
	return strings.Join(names, ",")
}

// describe is one sequence: its computed tokens of its context, blocks held
// and, where they are not zero, its counters.
func (e *engineScript) describe(s *Seq) string {
	d := fmt.Sprintf("%s(%d/%d blocks=%d", e.names[s.Ref], s.computed, s.Tokens(), e.in.SeqBlocks(s))
	if s.hostBlocks > 0 {
		d += fmt.Sprintf(" host=%d", s.hostBlocks)
	}
	if s.Preemptions > 0 {
		d += fmt.Sprintf(" preempted=%d", s.Preemptions)
	}
	if s.CachedTokens > 0 {
		d += fmt.Sprintf(" cached=%d", s.CachedTokens)
	}
	if s.Onboarding() {
		d += fmt.Sprintf(" onboarding=%d+%d", s.Onboard[TierHost]-int32(s.OnboardSliding[TierHost]), s.OnboardSliding[TierHost])
	}
	return d + ")"
}

func (e *engineScript) queue(q *deque) string {
	var ds []string
	for i := range q.len() {
		ds = append(ds, e.describe(q.at(i)))
	}
	return strings.Join(ds, " ")
}

func (e *engineScript) state() string {
	in := e.in
	in.settleFrom(0)
	var run []string
	for _, s := range in.running {
		run = append(run, e.describe(s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "running: %s\n", strings.Join(run, " "))
	fmt.Fprintf(&b, "waiting: %s\n", e.queue(&in.waiting))
	if in.ready.len() > 0 {
		fmt.Fprintf(&b, "ready: %s\n", e.queue(&in.ready))
	}
	if in.swapped.len() > 0 {
		fmt.Fprintf(&b, "swapped: %s\n", e.queue(&in.swapped))
	}
	if st, ok := in.mem.(*slots); ok {
		fmt.Fprintf(&b, "slots: layout=%d free=%v draining=%t paused=%t\n", st.layout, st.free, st.draining, st.paused)
	}
	stats := in.Stats()
	fmt.Fprintf(&b, "free=%d host=%d pulling=%d holding=%d victims=%d preemptions=%d swapouts=%d rejections=%d hit=%d",
		in.Pool().FreeBlocks(), in.HostBlocksUsed(), in.Pulling(), in.Holding(), in.Victims(),
		stats.Preemptions, stats.SwapOuts, stats.Rejections, stats.PrefixHitTokens)
	if in.deferredBlocks > 0 {
		fmt.Fprintf(&b, " deferred=%d", in.deferredBlocks)
	}
	if in.cfg.Admission == NewTokenRatio {
		fmt.Fprintf(&b, " ratio=%.6f", in.NewTokenRatio())
	}
	if cached, capacity := in.TierBlocks(TierHost); capacity > 0 {
		fmt.Fprintf(&b, " tier=%d/%d tierhits=%d", cached, capacity, stats.TierHitBlocks[TierHost])
	}
	b.WriteString("\n")
	return b.String()
}
