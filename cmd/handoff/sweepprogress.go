package main

import (
	"fmt"
	"io"
)

// sweepProgress is a sweep's progress line: points done of the total,
// those found finished included; the bar and the time left count this
// run's points. A nil *sweepProgress draws nothing.
type sweepProgress struct {
	line                 *progress
	total, done, resumed int
}

// newSweepProgress returns a sweep's progress line on w (see newProgress),
// or nil when off.
func newSweepProgress(w io.Writer, forced bool, total, resumed int) *sweepProgress {
	line := newProgress(w, forced, int64(total-resumed), "sweep")
	if line == nil {
		return nil
	}
	p := &sweepProgress{line: line, total: total, done: resumed, resumed: resumed}
	p.line.update(0, p.text())
	return p
}

// text is the line's text after the bar.
func (p *sweepProgress) text() string { return fmt.Sprintf("%d/%d points", p.done, p.total) }

// step counts one more point done and redraws.
func (p *sweepProgress) step() {
	if p == nil {
		return
	}
	p.done++
	p.line.update(int64(p.done-p.resumed), p.text())
}

// draw redraws the line, for its clock.
func (p *sweepProgress) draw() {
	if p != nil {
		p.line.tick()
	}
}

// finish ends the line.
func (p *sweepProgress) finish() {
	if p != nil {
		p.line.finish()
	}
}

// sweepProgressHook draws a sweep's progress line for sweeprun.Run: the
// line is made when the run knows its points.
type sweepProgressHook struct {
	w      io.Writer
	forced bool
	line   *sweepProgress
}

func (h *sweepProgressHook) Start(total, resumed int) {
	h.line = newSweepProgress(h.w, h.forced, total, resumed)
}
func (h *sweepProgressHook) Step() { h.line.step() }
func (h *sweepProgressHook) Tick() { h.line.draw() }
