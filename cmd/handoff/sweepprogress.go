package main

import (
	"fmt"
	"io"
	"os"
	"time"
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

// sweepProgress draws one status line, rewritten in place with \r: points
// done of the total, elapsed time and the estimated time left. A nil
// *sweepProgress draws nothing.
type sweepProgress struct {
	w       io.Writer
	total   int       // points this run will end with
	done    int       // of them finished, including those found finished
	resumed int       // found finished before this run started
	start   time.Time // when this run started
	now     func() time.Time
	width   int // length of the last line drawn, to blank its tail
}

// newSweepProgress returns a progress line on w, or nil when off.
func newSweepProgress(w io.Writer, on bool, total, resumed int) *sweepProgress {
	if !on {
		return nil
	}
	return &sweepProgress{w: w, total: total, done: resumed, resumed: resumed, start: time.Now(), now: time.Now}
}

// step counts one more point done and redraws.
func (p *sweepProgress) step() {
	if p == nil {
		return
	}
	p.done++
	p.draw()
}

// draw rewrites the line.
func (p *sweepProgress) draw() {
	if p == nil {
		return
	}
	elapsed := p.now().Sub(p.start)
	line := fmt.Sprintf("sweep %d/%d points (%d%%)  elapsed %s  eta %s", p.done, p.total,
		100*p.done/max(p.total, 1), clockText(elapsed), p.eta(elapsed))
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
}

// eta estimates the time left from this run's pace; "?" before the first
// point of this run finishes.
func (p *sweepProgress) eta(elapsed time.Duration) string {
	ran := p.done - p.resumed
	if ran <= 0 {
		return "?"
	}
	return clockText(elapsed / time.Duration(ran) * time.Duration(p.total-p.done))
}

// finish ends the line.
func (p *sweepProgress) finish() {
	if p == nil {
		return
	}
	p.draw()
	fmt.Fprintln(p.w)
}

// clockText formats d as h:mm:ss or m:ss.
func clockText(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
