package workload

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"handoff/sim"
)

// endless reads prefix, then the byte b forever, as /dev/zero does.
func endless(prefix string, b byte) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), byteReader(b))
}

type byteReader byte

func (b byteReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestTraceReadersCapLines feeds every trace reader an endless line: each
// stops with a one-line *ParseError at that line, naming the file once,
// instead of reading on.
func TestTraceReadersCapLines(t *testing.T) {
	azureHead := "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	for name, src := range map[string]sim.Source{
		"azure":           NewAzure(endless("", 0), "z.csv"),
		"azure after row": NewAzure(endless(azureHead+"2023-11-16 18:15:46,1,1\n", 'x'), "z.csv"),
		"burstgpt":        NewBurstGPT(endless("", 0), "z.csv"),
		"mooncake":        NewMooncake(endless("", 0), "z.csv", 512),
		"sessions":        NewSessionTrace(endless("", 0), "z.csv", 0),
		"sessions JSONL":  NewSessionTrace(endless("{", 'x'), "z.csv", 0),
		"mapped CSV":      NewMappedCSV(endless("", 0), "z.csv", mappedSpec("s", nil)),
		"mapped JSONL":    NewMappedJSONL(endless("", 0), "z.csv", mappedSpec("s", nil)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := drain(src, 10)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "line longer than 16777216 bytes") {
				t.Fatalf("error %v, want a line-length ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), "z.csv:") || strings.Count(err.Error(), "z.csv") != 1 {
				t.Errorf("error %q, want the file named once, first", err)
			}
			if want := map[bool]int{true: 3, false: 1}[name == "azure after row"]; pe.Line != want {
				t.Errorf("line %d, want %d", pe.Line, want)
			}
		})
	}
}

// TestServeGenCapsItsInputs: ServeGen's files are read whole, so each is
// capped in size (and the trace's lines in length).
func TestServeGenCapsItsInputs(t *testing.T) {
	const trace = "../traces/servegen-r1/chunk-0-trace.csv"
	_, err := NewServeGen(endless("", 0), bytes.NewReader(nil), "z-trace.csv", newRNG(1))
	if err == nil || !strings.HasPrefix(err.Error(), "z-trace.csv:1: line longer than 16777216 bytes") {
		t.Errorf("trace: %v", err)
	}
	_, err = NewServeGen(openFile(t, trace), endless(`{"0": {"input_tokens": "`, 'a'), trace, newRNG(1))
	if err == nil || !strings.HasSuffix(err.Error(), "chunk-0-dataset.json: larger than 64 MiB: not a ServeGen file") {
		t.Errorf("dataset: %v", err)
	}
}

// TestErrorsQuoteShortly: an error echoes at most 40 characters of a bad
// value or header, whatever its length.
func TestErrorsQuoteShortly(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for name, src := range map[string]sim.Source{
		"header": NewAzure(strings.NewReader(long+",b,c\n1,2,3\n"), "h.csv"),
		"tokens": NewAzure(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,"+long+",1\n"), "h.csv"),
		"time":   NewBurstGPT(strings.NewReader("Timestamp,Request tokens,Response tokens\n"+long+",1,1\n"), "h.csv"),
	} {
		_, err := drain(src, 10)
		if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), strings.Repeat("é", 40)+`"…`) {
			t.Errorf("%s: error %.400q", name, err)
		}
	}
	if got, want := quote("a\nb"), `"a\nb"`; got != want {
		t.Errorf("quote = %s, want %s", got, want)
	}
}
