package main

import (
	"bytes"
	"strings"
	"testing"
)

// lastFrame returns the last frame a progress line drew into out: the
// text after the last carriage return that is not blank, trimmed.
func lastFrame(out string) string {
	frames := strings.Split(out, "\r")
	for i := len(frames) - 1; i >= 0; i-- {
		if f := strings.TrimSpace(frames[i]); f != "" {
			return f
		}
	}
	return ""
}

// TestProgress draws into a buffer (not a terminal) with --progress: every
// update is drawn, without a clock, so the bytes follow from the calls.
func TestProgress(t *testing.T) {
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		p := newProgress(buf, true, 4, "run")
		p.update(1, "1/4 requests")
		if got := lastFrame(buf.String()); got != "run: 1/4 requests  25% |█████               |" {
			t.Errorf("after one: %q", got)
		}
		p.update(4, "4/4 requests")
		p.finish()
		if got := lastFrame(buf.String()); got != "run: 4/4 requests 100% |████████████████████|" {
			t.Errorf("at the end: %q", got)
		}
	}
	if a.String() != b.String() || !strings.HasSuffix(a.String(), "\n") || strings.Contains(a.String(), "[") {
		t.Errorf("two runs drew %q and %q; want the same, no clock, ending the line", a.String(), b.String())
	}
}

// TestProgressUnknownTotal: without a total the line turns a spinner
// before its text.
func TestProgressUnknownTotal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true, -1, "goodput")
	p.update(1, "1 probe")
	p.update(2, "2 probes")
	p.finish()
	if got := lastFrame(buf.String()); !strings.HasSuffix(got, " goodput: 2 probes") {
		t.Errorf("last frame %q", got)
	}
}

// TestProgressOff: without --progress, on a writer that is no terminal,
// there is no line, and its methods do nothing.
func TestProgressOff(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, 4, "run")
	if p != nil {
		t.Fatal("a progress line on a buffer without --progress")
	}
	p.update(1, "x")
	p.tick()
	p.finish()
	if buf.Len() != 0 || isTerminalWriter(&buf) {
		t.Errorf("wrote %q", buf.String())
	}
}
