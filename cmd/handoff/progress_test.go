package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"handoff/scenarios/experiment"
	"handoff/sim"
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

// TestSimProgressHook: sim.Config.Progress reports every
// sim.ProgressEvents events and at the end, in order, ending at every
// request ended at the run's last time; the run with the hook is the run
// without it.
func TestSimProgressHook(t *testing.T) {
	l, err := experiment.Load(quickstart, []string{"workload.synthetic.requests=2000"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ simNs, ended, total int64 }
	var calls []call
	sum, res, err := simulate(l, func(cfg *sim.Config) {
		cfg.Progress = func(simNs, ended, total int64) { calls = append(calls, call{simNs, ended, total}) }
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int(res.Events/sim.ProgressEvents) + 1; len(calls) != want || want < 2 {
		t.Fatalf("%d calls over %d events, want %d (at least 2)", len(calls), res.Events, want)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].simNs < calls[i-1].simNs || calls[i].ended < calls[i-1].ended || calls[i].total != 2000 {
			t.Errorf("call %d %+v after %+v", i, calls[i], calls[i-1])
		}
	}
	if last := calls[len(calls)-1]; last != (call{res.SimTimeNs, 2000, 2000}) {
		t.Errorf("last call %+v, want the run's end %d ns, 2000 of 2000", last, res.SimTimeNs)
	}
	plain, _, err := simulate(l)
	if err != nil {
		t.Fatal(err)
	}
	sum.WallTimeS, plain.WallTimeS = 0, 0
	if !reflect.DeepEqual(sum, plain) {
		t.Error("the run with the hook differs from the run without it")
	}
}

// TestRunProgress: run --progress draws the simulated time and requests
// on stderr and leaves stdout as it is without it.
func TestRunProgress(t *testing.T) {
	args := []string{"run", quickstart, "--set", "workload.synthetic.requests=100"}
	_, plain, _ := runCLI(t, args...)
	code, stdout, stderr := runCLI(t, append(args, "--progress")...)
	wall := regexp.MustCompile(`wall [0-9.]+ s`) // the one line that differs between runs
	if stdout, plain = wall.ReplaceAllString(stdout, "wall"), wall.ReplaceAllString(plain, "wall"); code != 0 || stdout != plain {
		t.Fatalf("exit %d; stdout with --progress differs:\n%s\nwithout:\n%s", code, stdout, plain)
	}
	got := lastFrame(stderr)
	if !strings.HasPrefix(got, "run: ") || !strings.Contains(got, " s simulated, 100/100 requests ended 100% |") {
		t.Errorf("last frame %q", got)
	}
}

// TestCalibrateProgress: calibrate --progress counts its simulations on
// stderr and writes the report it writes without it.
func TestCalibrateProgress(t *testing.T) {
	dir := t.TempDir()
	args := []string{"calibrate", "--dir", "../../scenarios/calibration", "--pd=false"}
	plain, with := filepath.Join(dir, "plain.md"), filepath.Join(dir, "with.md")
	code, _, quiet := runCLI(t, append(args, "-o", plain)...)
	if code != 0 {
		t.Fatal(quiet)
	}
	code, _, stderr := runCLI(t, append(args, "-o", with, "--progress")...)
	if code != 0 || !bytes.Equal(readFile(t, plain), readFile(t, with)) {
		t.Fatalf("exit %d; the report with --progress differs: %s", code, stderr)
	}
	if got := lastFrame(stderr); !regexp.MustCompile(`^\S+ calibrate: [1-9][0-9]* simulations run$`).MatchString(got) ||
		strings.Contains(quiet, "simulations run") {
		t.Errorf("last frame %q; without --progress stderr %q", got, quiet)
	}
}

// TestProgressAbove: lines written above the progress line keep it at the
// bottom, and a line never updated draws nothing.
func TestProgressAbove(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true, -1, "calibrate")
	p.update(1, "1 simulations run")
	p.above([]byte("calibrate: fit done\n"))
	p.finish()
	out := buf.String()
	if !strings.Contains(out, "\rcalibrate: fit done\n") || !strings.HasSuffix(lastFrame(out), "calibrate: 1 simulations run") {
		t.Errorf("drew %q", out)
	}
	buf.Reset()
	newProgress(&buf, true, -1, "calibrate").finish()
	if buf.Len() != 0 {
		t.Errorf("a line never updated drew %q", buf.String())
	}
}

// TestProgressFramesAgree: every frame drawn shows the text and the bar
// of one update — never the new bar beside the old count ("0/6 points
// 16%").
func TestProgressFramesAgree(t *testing.T) {
	var buf bytes.Buffer
	p := newSweepProgress(&buf, true, 7, 1)
	for range 6 {
		p.step()
	}
	p.finish()
	frame := regexp.MustCompile(`(\d+)/7 points +(\d+)%`)
	n := 0
	for _, f := range strings.Split(buf.String(), "\r") {
		m := frame.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		n++
		var done, percent int
		fmt.Sscan(m[1], &done)
		fmt.Sscan(m[2], &percent)
		if want := (done - 1) * 100 / 6; percent != want {
			t.Errorf("frame %q: %d/7 points (1 resumed) shows %d%%, want %d%%", strings.TrimSpace(f), done, percent, want)
		}
	}
	if n < 7 {
		t.Errorf("%d frames drawn, want one per update: %q", n, buf.String())
	}
}
