package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"handoff/sim"
)

// isTerminalWriter reports whether w is a character device (a terminal).
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressEveryNs is the least wall time between two drawings on a
// terminal.
const progressEveryNs = int64(100 * time.Millisecond)

// progress is the one status line of a long command, on stderr, rewritten
// in place: a bar (when the total is known) and a text the command
// updates. It draws through github.com/schollz/progressbar/v3, which
// renders synchronously in the caller's goroutine, so that what it writes
// follows from the calls alone. On a terminal it also shows the elapsed
// time and an estimate of the time left, and draws at most every
// progressEveryNs; elsewhere (--progress into a file or a pipe) it draws
// every update and no clock, so that two runs write the same bytes.
// A nil *progress draws nothing and costs nothing.
type progress struct {
	w        io.Writer
	out      *mutable // the bar's writer: w, muted while the bar moves
	bar      *progressbar.ProgressBar
	label    string
	total    int64 // units this run will do; ≤ 0 = not known
	terminal bool
	lastNs   int64  // wall time of the last drawing, ns since the Unix epoch
	done     int64  // of total, as last updated
	text     string // as last updated
	drawn    bool   // done and text are on the line
}

// newProgress returns the progress line of a command on w, or nil when w
// is not a terminal and the user did not ask for it (forced, --progress).
// total is how many units this run will do (≤ 0: not known; the line
// shows a spinner then), label what the command is ("sweep", "goodput").
func newProgress(w io.Writer, forced bool, total int64, label string) *progress {
	terminal := isTerminalWriter(w)
	if !forced && !terminal {
		return nil
	}
	out := &mutable{w: w}
	opts := []progressbar.Option{progressbar.OptionSetWriter(out), progressbar.OptionSetWidth(20),
		progressbar.OptionSetDescription(label), progressbar.OptionSetPredictTime(terminal && total > 0),
		progressbar.OptionSetElapsedTime(terminal), progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(0)} // no drawing goroutine
	max := total
	if total <= 0 {
		max = -1
	}
	return &progress{w: w, out: out, bar: progressbar.NewOptions64(max, opts...), label: label, total: total, terminal: terminal}
}

// update records that done units of the total are done and sets the text
// after the bar, then draws: on a terminal, unless it drew less than
// progressEveryNs ago and the work is not complete.
func (p *progress) update(done int64, text string) {
	if p == nil {
		return
	}
	p.done, p.text, p.drawn = done, text, false
	now := time.Now().UnixNano()
	if p.terminal && now-p.lastNs < progressEveryNs && (p.total <= 0 || done < p.total) {
		return
	}
	p.lastNs = now
	p.draw()
}

// draw writes the line as last updated, in one frame: the bar moves
// with its writer muted (it draws itself, beside the old text), then the
// new text draws both.
func (p *progress) draw() {
	if p == nil {
		return
	}
	if p.total > 0 {
		p.out.muted = true
		_ = p.bar.Set64(min(p.done, p.total))
		p.out.muted = false
	}
	p.bar.Describe(p.label + ": " + p.text) // draws, and turns the spinner
	p.drawn = true
}

// mutable passes writes to w unless muted, when it drops them.
type mutable struct {
	w     io.Writer
	muted bool
}

// Write implements io.Writer.
func (m *mutable) Write(b []byte) (int, error) {
	if m.muted {
		return len(b), nil
	}
	return m.w.Write(b)
}

// above clears the line, writes b (whole lines) in its place and draws
// the line again below it.
func (p *progress) above(b []byte) {
	if p.text == "" {
		_, _ = p.w.Write(b) // nothing drawn yet
		return
	}
	_ = p.bar.Clear()
	_, _ = p.w.Write(b)
	p.draw()
}

// tick redraws the line on a terminal, where the clock moves; elsewhere
// it does nothing, so that the bytes written follow from the updates.
func (p *progress) tick() {
	if p != nil && p.terminal {
		p.draw()
	}
}

// finish draws the last update if it was held back and ends the line;
// a line never updated is left alone.
func (p *progress) finish() {
	if p == nil || p.text == "" {
		return // never updated: nothing on the line
	}
	if !p.drawn {
		p.draw()
	}
	_ = p.bar.Exit()
	fmt.Fprintln(p.w)
}

// simProgress shows a simulation's progress (sim.Config.Progress) on a
// progress line: simulated time and requests ended. The line is made at
// the first report, which brings the total.
type simProgress struct {
	w      io.Writer
	forced bool
	label  string
	line   *progress
}

// attach makes cfg report to the line, unless the line is off (w nil, or
// no terminal and not forced).
func (s *simProgress) attach(cfg *sim.Config) {
	if s.w != nil && (s.forced || isTerminalWriter(s.w)) {
		cfg.Progress = s.report
	}
}

// report is the sim.Config.Progress hook.
func (s *simProgress) report(simNs, ended, total int64) {
	if s.line == nil {
		s.line = newProgress(s.w, s.forced, total, s.label)
	}
	of := ""
	if total > 0 {
		of = fmt.Sprintf("/%d", total)
	}
	s.line.update(ended, fmt.Sprintf("%.1f s simulated, %d%s requests ended", float64(simNs)/1e9, ended, of))
}

// finish ends the line, if it was drawn.
func (s *simProgress) finish() { s.line.finish() }
