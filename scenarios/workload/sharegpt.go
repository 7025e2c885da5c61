package workload

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"unicode/utf8"

	"handoff/sim"
)

// FormatShareGPT is the ShareGPT conversation dataset (NewShareGPT).
const FormatShareGPT = "sharegpt"

// vLLM's filter of ShareGPT pairs, in tokens (is_valid_sequence in
// vllm/benchmarks/datasets/utils.py, the defaults vllm bench serve uses).
const (
	shareGPTMinTokens      = 4    // a shorter prompt or answer is skipped
	shareGPTMaxPrompt      = 1024 // a longer prompt is skipped
	shareGPTMaxTotalTokens = 2048 // a longer prompt and answer together are skipped
)

// charsPerToken is the tokenizer-free estimate of a text's length: one
// token per 4 characters, OpenAI's rule of thumb for English text with
// its tokenizers ("What are tokens and how to count them?", OpenAI help
// center: "1 token ≈ 4 chars in English"). It is an estimate: code and
// languages other than English (ShareGPT holds both) run to more tokens
// per character; a turn's "tokens" key, a count the user's own tokenizer
// made, replaces it.
const charsPerToken = 4

// NewShareGPT streams a ShareGPT file as `vllm bench serve
// --dataset-name sharegpt` reads it (ShareGPTDataset in
// vllm/benchmarks/datasets/sharegpt.py): a JSON list of entries
// {"conversations": [{"from": "human", "value": "..."}, {"from": "gpt",
// "value": "..."}, ...]}; the first turn's value is the prompt, the
// second's the answer, whose length the output takes (the roles are not
// checked, as vLLM does not check them). Lengths are estimated from the
// text, ⌈characters / 4⌉ (charsPerToken), or taken from a turn's "tokens"
// key. Entries vLLM skips are skipped and counted (Clamped().Skipped):
// those without two turns, and pairs with a prompt or answer under 4
// tokens, a prompt over 1024, or both over 2048. vLLM shuffles the
// entries with its seed; the file is replayed in its order (shuffle it
// beforehand for another sample). ShareGPT has no timestamps: requests
// arrive by a, drawn from rng as the synthetic generator draws them, the
// first at 0. A malformed entry is a *ParseError naming its line and JSON
// path ("[17].conversations[1].value"). Cost per entry: its text decoded
// once.
func NewShareGPT(r io.Reader, file string, a Arrival, rng *rand.Rand) sim.Source {
	return &shareGPT{jsonStream: newJSONStream(r, file), gaps: newGapSampler(a, rng)}
}

type shareGPT struct {
	*jsonStream
	gaps    *gapSampler
	timeNs  float64 // the next arrival, unrounded
	index   int     // the next entry's index in the list
	started bool
}

// shareGPTTurn is the part of a turn the reader takes.
type shareGPTTurn struct {
	Value  *string      `json:"value"`
	Tokens *json.Number `json:"tokens"`
}

// Next implements sim.Source.
func (g *shareGPT) Next(r *sim.Request) (bool, error) {
	if g.err != nil || g.done {
		return false, g.err
	}
	if !g.started {
		if err := g.delim('[', "a JSON list of conversations (ShareGPT)"); err != nil {
			return g.fail(err)
		}
		g.started = true
	}
	for g.dec.More() {
		ok, err := g.entry(r)
		if err != nil {
			return g.fail(err)
		}
		if ok {
			return true, nil
		}
	}
	if err := g.end(); err != nil {
		return g.fail(err)
	}
	g.done = true
	return false, nil
}

// entry reads the next entry into r; false when vLLM's filter skips it.
func (g *shareGPT) entry(r *sim.Request) (bool, error) {
	var raw json.RawMessage
	line, err := g.value(&raw)
	if err != nil {
		return false, err
	}
	at := "[" + strconv.Itoa(g.index) + "]"
	g.index++
	prompt, output, ok, err := g.pair(raw, line, at)
	if err != nil || !ok {
		return false, err
	}
	if g.timeNs > maxTraceSpanNs {
		return false, g.errorf(line, at, "arrivals passed 100 years: the arrival rate is too low")
	}
	if err := g.emit(r, line, at, int64(math.Round(g.timeNs)), prompt, output); err != nil {
		return false, err
	}
	g.timeNs += g.gaps.draw()
	return true, nil
}

// pair returns the lengths of an entry's first two turns; ok false (the
// entry counted as skipped) when vLLM would skip it.
func (g *shareGPT) pair(raw json.RawMessage, line int, at string) (prompt, output int, ok bool, err error) {
	var e struct {
		Conversations json.RawMessage `json:"conversations"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return 0, 0, false, g.errorf(line, at, "want an object with conversations, got %s", rawKind(raw))
	}
	var turns []json.RawMessage
	if len(e.Conversations) > 0 && string(e.Conversations) != "null" {
		if err := json.Unmarshal(e.Conversations, &turns); err != nil {
			return 0, 0, false, g.errorf(line, at+".conversations", "want a list of turns, got %s", rawKind(e.Conversations))
		}
	}
	if len(turns) < 2 {
		g.clamped.Skipped++
		return 0, 0, false, nil
	}
	if prompt, err = g.turnTokens(turns[0], line, at+".conversations[0]"); err != nil {
		return 0, 0, false, err
	}
	if output, err = g.turnTokens(turns[1], line, at+".conversations[1]"); err != nil {
		return 0, 0, false, err
	}
	if prompt < shareGPTMinTokens || output < shareGPTMinTokens || prompt > shareGPTMaxPrompt ||
		prompt+output > shareGPTMaxTotalTokens {
		g.clamped.Skipped++
		return 0, 0, false, nil
	}
	return prompt, output, true, nil
}

// turnTokens is a turn's length: its tokens key, or its value's estimate.
func (g *shareGPT) turnTokens(raw json.RawMessage, line int, at string) (int, error) {
	var t shareGPTTurn
	if err := json.Unmarshal(raw, &t); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return 0, g.errorf(line, at+"."+te.Field, "cannot use a JSON %s as %s", te.Value, jsonKind(te.Type))
		}
		return 0, g.errorf(line, at, "want a turn {\"from\": ..., \"value\": ...}, got %s", rawKind(raw))
	}
	if t.Tokens != nil {
		return g.parseTokens(line, at+".tokens", t.Tokens.String())
	}
	if t.Value == nil {
		return 0, g.errorf(line, at+".value", "missing: a turn's text")
	}
	return (utf8.RuneCountInString(*t.Value) + charsPerToken - 1) / charsPerToken, nil
}

// end reads the list's closing bracket and checks that nothing follows.
func (g *shareGPT) end() error {
	if _, err := g.dec.Token(); err != nil {
		return g.streamError(err)
	}
	if tok, err := g.dec.Token(); err != io.EOF {
		if err != nil {
			return g.streamError(err)
		}
		return g.errorf(g.line(), "", "%s after the list of conversations: a ShareGPT file is one list", tokenKind(tok))
	}
	return nil
}

// rawKind names the kind of a JSON value for an error.
func rawKind(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "malformed JSON"
	}
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
