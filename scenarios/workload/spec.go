package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"handoff/models/units"
)

// Synthetic describes a generated workload: a renewal arrival process and
// independent prompt and output length distributions. It stops after
// Requests requests or at Duration, whichever comes first (0 = unused; at
// least one must be set).
type Synthetic struct {
	Requests     int            `yaml:"requests"`
	Duration     units.Duration `yaml:"duration"` // no arrival at or after this time
	Arrival      Arrival        `yaml:"arrival"`
	InputTokens  Length         `yaml:"input_tokens"`
	OutputTokens Length         `yaml:"output_tokens"`
}

// The arrival processes.
const (
	ProcessPoisson  = "poisson"  // exponential gaps (CV 1)
	ProcessGamma    = "gamma"    // gamma gaps with coefficient of variation CV
	ProcessConstant = "constant" // equal gaps 1/Rate
)

// Processes returns the arrival processes Arrival.Validate accepts, in
// the order its errors list them.
func Processes() []string { return []string{ProcessPoisson, ProcessGamma, ProcessConstant} }

// Arrival is a renewal process: the first request arrives at 0, then gaps
// are independent draws with mean 1/Rate.
type Arrival struct {
	Process string     `yaml:"process"`
	Rate    units.Rate `yaml:"rate"` // requests per second
	CV      float64    `yaml:"cv"`   // gamma only: stddev/mean of the gaps
}

// The length distributions.
const (
	DistFixed     = "fixed"     // Value
	DistUniform   = "uniform"   // integers in [Min, Max]
	DistNormal    = "normal"    // Mean, Stddev, rounded, clamped
	DistLognormal = "lognormal" // Mean, Stddev of the length itself, rounded, clamped
	DistEmpirical = "empirical" // Values with Weights (equal when omitted)
)

// lengthFields lists, for each length distribution, the fields it reads;
// its keys are the distributions Length.Validate accepts.
var lengthFields = map[string][]string{
	DistFixed:     {"value"},
	DistUniform:   {"min", "max"},
	DistNormal:    {"mean", "stddev", "min", "max"},
	DistLognormal: {"mean", "stddev", "min", "max"},
	DistEmpirical: {"values", "weights"},
}

// Dists returns the length distributions Length.Validate accepts, in the
// order its errors list them.
func Dists() []string {
	return []string{DistFixed, DistUniform, DistNormal, DistLognormal, DistEmpirical}
}

// Length is a distribution of token counts. For normal and lognormal, draws
// are rounded and clamped to [max(1, Min), Max] (Max 0 = no upper bound).
// For lognormal, Mean and Stddev describe the length, not its logarithm.
type Length struct {
	Dist    string    `yaml:"dist"`
	Value   int       `yaml:"value"`
	Min     int       `yaml:"min"`
	Max     int       `yaml:"max"`
	Mean    float64   `yaml:"mean"`
	Stddev  float64   `yaml:"stddev"`
	Values  []int     `yaml:"values"`
	Weights []float64 `yaml:"weights"`
}

// SharedPrefix is the inference-perf shared_prefix load: NumGroups system
// prompts, each shared by UsersPerGroup users; requests cycle over the users
// in order, and each is the user's group system prompt followed by that
// user's question (the same every time the user returns); the output length
// is fixed. Stages run back to back.
type SharedPrefix struct {
	NumGroups       int     `yaml:"num_unique_system_prompts"`
	UsersPerGroup   int     `yaml:"num_users_per_system_prompt"`
	SystemPromptLen int     `yaml:"system_prompt_len"` // tokens
	QuestionLen     int     `yaml:"question_len"`      // tokens
	OutputLen       int     `yaml:"output_len"`        // tokens
	Stages          []Stage `yaml:"stages"`
}

// Stage sends exactly round(Rate × Duration) requests, spread over Duration
// as a Poisson process conditioned on that count.
type Stage struct {
	Duration units.Duration `yaml:"duration"`
	Rate     units.Rate     `yaml:"rate"` // requests per second
}

// The trace formats.
const (
	FormatAzure    = "azure"
	FormatMooncake = "mooncake"
	FormatBurstGPT = "burstgpt"
)

// Trace names a trace file to replay. Path is resolved by the loader.
// The fields after Limit are a format's own (Validate refuses them for
// the others): a ShareGPT file's arrival process; a generic CSV or JSONL
// file's column mapping, timestamp unit and prefix block size.
type Trace struct {
	Format        string   `yaml:"format"`
	Path          string   `yaml:"path"`
	Limit         int      `yaml:"limit"`                    // stop after this many requests; 0 = all
	Arrival       *Arrival `yaml:"arrival,omitempty"`        // sharegpt: when requests arrive
	Columns       *Columns `yaml:"columns,omitempty"`        // csv, jsonl: which column holds what
	TimestampUnit string   `yaml:"timestamp_unit,omitempty"` // csv, jsonl: s, ms, us, ns or datetime
	BlockTokens   int      `yaml:"block_tokens,omitempty"`   // csv, jsonl with columns.prefix_ids: tokens per id
	// ClassNames are the workload's traffic classes, which a generic
	// trace's class column names (columns.class); the loader sets them.
	ClassNames []string `yaml:"-"`
}

// ServeGen names a ServeGen client description to generate requests from:
// Path is the common prefix of its two files (".../chunk-0" for
// chunk-0-trace.csv and chunk-0-dataset.json); Windows lists the
// window_start_s values to replay back to back (none = all). Paths, in
// place of Path, names several clients replayed together, their requests
// merged in arrival order (Merge), each with the same Windows; Limit
// counts the merged requests. Copies > 1 replays every client that many
// times, each copy drawn independently: the traffic of that many tenants
// like it over the same windows, a rate scaling that keeps the day's
// length (workload.rate_scale compresses time instead).
type ServeGen struct {
	Path    string   `yaml:"path,omitempty"`
	Paths   []string `yaml:"paths,omitempty"`
	Copies  int      `yaml:"copies,omitempty"`
	Windows []int    `yaml:"windows,omitempty"`
	Limit   int      `yaml:"limit"` // stop after this many requests; 0 = all
}

// Clients returns the clients g names: Paths, or Path alone.
func (g ServeGen) Clients() []string {
	if len(g.Paths) > 0 {
		return g.Paths
	}
	return []string{g.Path}
}

// Validate checks the spec; errors name fields relative to it.
func (g ServeGen) Validate() error {
	switch {
	case g.Path != "" && len(g.Paths) > 0:
		return fieldErr("paths", "give path or paths, not both")
	case g.Path == "" && len(g.Paths) == 0:
		return fieldErr("path", "must name a client, e.g. traces/servegen-r1/chunk-0")
	case slices.Contains(g.Paths, ""):
		return fieldErr(fmt.Sprintf("paths[%d]", slices.Index(g.Paths, "")), "must name a client")
	case g.Limit < 0:
		return fieldErr("limit", "must be ≥ 0 (0 = all), got %d", g.Limit)
	case g.Copies < 0 || g.Copies > MaxServeGenCopies:
		return fieldErr("copies", "must be in [0, %d] (0 or 1 = once), got %d", MaxServeGenCopies, g.Copies)
	}
	return nil
}

// MaxServeGenCopies bounds ServeGen.Copies: each copy keeps its client's
// windows and length distributions.
const MaxServeGenCopies = 4096

// fieldErr builds a validation error naming a field relative to the spec.
func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

// Validate checks s; errors name fields relative to s ("arrival.rate: ...").
func (s Synthetic) Validate() error {
	var errs []error
	if s.Requests < 0 {
		errs = append(errs, fieldErr("requests", "must be ≥ 0, got %d", s.Requests))
	}
	if s.Duration < 0 {
		errs = append(errs, fieldErr("duration", "must be ≥ 0"))
	}
	if s.Requests == 0 && s.Duration == 0 {
		errs = append(errs, fieldErr("requests", "set requests or duration (or both) to bound the workload"))
	}
	errs = append(errs, prefixed("arrival", s.Arrival.Validate()))
	errs = append(errs, prefixed("input_tokens", s.InputTokens.Validate()))
	errs = append(errs, prefixed("output_tokens", s.OutputTokens.Validate()))
	return errors.Join(errs...)
}

// Validate checks a; errors name fields relative to a ("rate: ...").
func (a Arrival) Validate() error {
	var errs []error
	if !slices.Contains(Processes(), a.Process) {
		errs = append(errs, fieldErr("process", "%q is not one of %s", a.Process, strings.Join(Processes(), ", ")))
	}
	if !(a.Rate > 0) || math.IsInf(float64(a.Rate), 0) {
		errs = append(errs, fieldErr("rate", "must be > 0 and finite"))
	}
	if a.Process == ProcessGamma && (!(a.CV > 0) || a.CV > 100) {
		errs = append(errs, fieldErr("cv", "must be in (0, 100] for a gamma process, got %g", a.CV))
	}
	if a.Process != ProcessGamma && a.CV != 0 {
		errs = append(errs, fieldErr("cv", "applies only to process gamma"))
	}
	return errors.Join(errs...)
}

// prefixed puts "prefix." before each line of err's message (nil stays nil).
func prefixed(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range unjoin(err) {
		out = append(out, fmt.Errorf("%s.%w", prefix, e))
	}
	return errors.Join(out...)
}

// unjoin returns the errors errors.Join combined, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
