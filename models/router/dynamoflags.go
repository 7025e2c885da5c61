package router

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"handoff/models/strictyaml"
	"handoff/models/units"
)

// A Dynamo flags file is the router's part of a `python -m dynamo.frontend`
// command line, as the user deploys it: flags one per line or as one shell
// argument list (a trailing backslash continues a line; # starts a
// comment). Its flags are those of Dynamo's KvRouterArgGroup
// (components/src/dynamo/common/configuration/groups/kv_router_args.py),
// each the KvRouterConfig field of the same name.

// dynamoFlag is one flag handoff models: the knob of router.dynamo it
// sets and how. Boolean flags (Dynamo's negatable ones) take no value.
type dynamoFlag struct {
	knob string
	set  func(c *DynamoConfig, v string) error // nil: a boolean flag
	on   func(c *DynamoConfig)                 // a boolean flag's effect
}

// floatFlag sets the float field that field returns.
func floatFlag(knob string, field func(c *DynamoConfig) *float64) dynamoFlag {
	return dynamoFlag{knob: knob, set: func(c *DynamoConfig, v string) error {
		x, err := parseNumber(v)
		*field(c) = x
		return err
	}}
}

// dynamoFlags maps each flag handoff models to its router.dynamo knob.
var dynamoFlags = map[string]dynamoFlag{
	"--router-mode": {knob: "policy: dynamo", set: func(_ *DynamoConfig, v string) error {
		if v != "kv" {
			return fmt.Errorf("router mode %q is not Dynamo's KV router, the one router.dynamo models (kv)", v)
		}
		return nil
	}},
	"--router-kv-overlap-score-credit": floatFlag("overlap_score_credit", func(c *DynamoConfig) *float64 { return &c.OverlapScoreCredit }),
	"--router-kv-overlap-score-credit-decay": floatFlag("overlap_score_credit_decay",
		func(c *DynamoConfig) *float64 { return &c.OverlapScoreCreditDecay }),
	"--router-kv-overlap-score-weight": {knob: "kv_overlap_score_weight", set: setOverlapWeight},
	"--kv-overlap-score-weight":        {knob: "kv_overlap_score_weight", set: setOverlapWeight},
	"--router-prefill-load-scale":      floatFlag("prefill_load_scale", func(c *DynamoConfig) *float64 { return &c.PrefillLoadScale }),
	"--router-host-cache-hit-weight":   floatFlag("host_cache_hit_weight", func(c *DynamoConfig) *float64 { return &c.HostCacheHitWeight }),
	"--router-disk-cache-hit-weight":   floatFlag("disk_cache_hit_weight", func(c *DynamoConfig) *float64 { return &c.DiskCacheHitWeight }),
	"--shared-cache-multiplier":        floatFlag("shared_cache_multiplier", func(c *DynamoConfig) *float64 { return &c.SharedCacheMultiplier }),
	"--router-temperature":             floatFlag("temperature", func(c *DynamoConfig) *float64 { return &c.Temperature }),
	"--router-queue-threshold":         {knob: "router_queue_threshold", set: setQueueThreshold},
	"--router-queue-policy": {knob: "router_queue_policy", set: func(c *DynamoConfig, v string) error {
		c.QueuePolicy = v
		return nil
	}},
	"--router-ttl-secs":               {knob: "ttl", set: setTTL},
	"--router-kv-events":              {knob: "use_kv_events: true", on: func(c *DynamoConfig) { c.UseKVEvents = true }},
	"--no-router-kv-events":           {knob: "use_kv_events: false", on: func(c *DynamoConfig) { c.UseKVEvents = false }},
	"--router-assume-kv-reuse":        {knob: "assume_kv_reuse: true", on: func(c *DynamoConfig) { c.AssumeKVReuse = true }},
	"--no-router-assume-kv-reuse":     {knob: "assume_kv_reuse: false", on: func(c *DynamoConfig) { c.AssumeKVReuse = false }},
	"--router-track-output-blocks":    {knob: "router_track_output_blocks: true", on: func(c *DynamoConfig) { c.TrackOutputBlocks = true }},
	"--no-router-track-output-blocks": {knob: "router_track_output_blocks: false", on: func(c *DynamoConfig) { c.TrackOutputBlocks = false }},
	// The frontend's router group (router_args.py, _ROUTER_FIELDS, passed
	// to RouterConfig rather than KvRouterConfig).
	"--active-decode-blocks-threshold": floatFlag("active_decode_blocks_threshold",
		func(c *DynamoConfig) *float64 { return optional(&c.ActiveDecodeBlocksThreshold) }),
	"--active-prefill-tokens-threshold-frac": floatFlag("active_prefill_tokens_threshold_frac",
		func(c *DynamoConfig) *float64 { return optional(&c.ActivePrefillTokensThresholdFrac) }),
	"--active-prefill-tokens-threshold":  {knob: "active_prefill_tokens_threshold", set: setPrefillTokensThreshold},
	"--router-session-affinity-ttl-secs": {knob: "session_affinity_ttl", set: setSessionTTL},
}

// dynamoRefused says why handoff refuses the flags of Dynamo's router it
// knows of but does not model.
var dynamoRefused = map[string]string{
	"--router-prefill-load-model":            "its aic model reads AIConfigurator's prefill time estimates, which handoff does not model",
	"--router-queue-by-incoming-missing-isl": "the pending-queue caps by missing prompt tokens are not modelled",
}

// optional returns the value *p points to, pointing p at a new zero value
// first if it is nil.
func optional[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
}

// setPrefillTokensThreshold reads a whole number of tokens.
func setPrefillTokensThreshold(c *DynamoConfig, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number of tokens", v)
	}
	c.ActivePrefillTokensThreshold = &n
	return nil
}

// setSessionTTL reads a whole number of seconds, as the frontend's flag
// takes them.
func setSessionTTL(c *DynamoConfig, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number of seconds", v)
	}
	ttl := units.Duration(n) * 1e9
	c.SessionAffinityTTL = &ttl
	return nil
}

// DynamoFlagKnobs returns each modelled flag and the router.dynamo knob it
// sets, sorted by flag.
func DynamoFlagKnobs() [][2]string {
	out := make([][2]string, 0, len(dynamoFlags))
	for _, f := range dynamoFlagNames() {
		out = append(out, [2]string{f, dynamoFlags[f].knob})
	}
	return out
}

func dynamoFlagNames() []string {
	names := make([]string, 0, len(dynamoFlags))
	for f := range dynamoFlags {
		names = append(names, f)
	}
	slices.Sort(names)
	return names
}

// parseNumber reads a finite number.
func parseNumber(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return x, nil
}

func setOverlapWeight(c *DynamoConfig, v string) error {
	x, err := parseNumber(v)
	c.KVOverlapScoreWeight = &x
	return err
}

// setQueueThreshold refuses 0: Dynamo then queues as soon as any prefill
// is active, while router_queue_threshold 0 means never hold.
func setQueueThreshold(c *DynamoConfig, v string) error {
	x, err := parseNumber(v)
	if err == nil && x == 0 {
		return errors.New("0 (queue while any prefill is active) is not modelled: router_queue_threshold 0 never holds; use a small positive threshold")
	}
	c.QueueThreshold = x
	return err
}

func setTTL(c *DynamoConfig, v string) error {
	x, err := parseNumber(v)
	if err == nil && !(x > 0 && x <= MaxWeight) {
		return fmt.Errorf("must be a positive number of seconds, got %g", x)
	}
	c.TTL = units.Duration(math.Round(x * 1e9))
	return err
}

// IsDynamoFlags reports whether data reads as a Dynamo flags file: its
// first word, past blank lines and comments, is a flag.
func IsDynamoFlags(data []byte) bool {
	toks := flagTokens(string(data))
	return len(toks) > 0 && strings.HasPrefix(toks[0].text, "--")
}

// flagToken is one word of a flags file and its 1-based line.
type flagToken struct {
	text string
	line int
}

// flagTokens splits a flags file into words, dropping comments, line
// continuations and the quotes around a word.
func flagTokens(s string) []flagToken {
	var toks []flagToken
	for i, line := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(line) {
			if strings.HasPrefix(w, "#") {
				break
			}
			if w == `\` {
				continue
			}
			w = strings.TrimSuffix(w, `\`)
			if len(w) >= 2 && (w[0] == '\'' || w[0] == '"') && w[len(w)-1] == w[0] {
				w = w[1 : len(w)-1]
			}
			toks = append(toks, flagToken{w, i + 1})
		}
	}
	return toks
}

// ReadDynamoFlags reads a Dynamo flags file (file names it in errors) as
// the router.dynamo section it stands for: Dynamo's defaults with each
// flag applied in order, the last of a repeated flag winning as in
// argparse. A flag handoff does not model, a missing value or a value the
// knob refuses is one error naming the file, the line and the flag.
func ReadDynamoFlags(data []byte, file string) (DynamoConfig, error) {
	cfg := DefaultDynamoConfig()
	toks := flagTokens(string(data))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		name, value, inline := strings.Cut(t.text, "=")
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: flag %s: %s", file, t.line, name, fmt.Sprintf(format, args...))
		}
		if !strings.HasPrefix(name, "--") {
			return cfg, fail("expected a flag (--name), got a word with no flag before it")
		}
		f, ok := dynamoFlags[name]
		switch {
		case !ok:
			why := ""
			if reason, known := dynamoRefused[name]; known {
				why = " (" + reason + ")"
			}
			return cfg, fail("not modelled by handoff%s; it models: %s", why, strings.Join(dynamoFlagNames(), ", "))
		case f.set == nil && inline:
			return cfg, fail("takes no value (Dynamo's switches are --name and --no-name)")
		case f.set == nil:
			f.on(&cfg)
		default:
			if !inline {
				if i+1 == len(toks) || strings.HasPrefix(toks[i+1].text, "--") {
					return cfg, fail("needs a value")
				}
				i++
				value = toks[i].text
			}
			if err := f.set(&cfg, value); err != nil {
				return cfg, fail("%v", err)
			}
		}
		if err := cfg.Check(); err != nil {
			return cfg, fail("%s", checkMsg(err))
		}
	}
	return cfg, nil
}

// checkMsg is Check's message without its field (the flag names it).
func checkMsg(err error) string {
	var fe *strictyaml.FieldError
	if errors.As(err, &fe) {
		return fe.Msg
	}
	return err.Error()
}
