//go:build race

package kv

// raceEnabled reports whether the race detector is on. The pool is
// single-threaded, so under the detector the long random tests only need to
// show they run clean, and they run fewer cases (it slows them tenfold).
const raceEnabled = true
