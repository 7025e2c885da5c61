// Package plot draws the pictures a capacity planner or a reliability
// engineer looks at, from results already computed: SLO attainment and
// request goodput against request rate, latency CDFs against the SLO, where
// the mean request's time goes (by component or by owner), per-instance KV
// and batch timelines with preemptions, a changing fleet's instances per
// pool over time, and cost against request goodput with its Pareto front.
//
// Every plot is rendered to an io.Writer as PNG (150 dpi) or SVG, about
// 6 × 4 in, so tests can render to buffers. DrawDir re-draws the plots of a
// saved run or sweep directory into DIR/plots without simulating anything,
// saving each file through the caller's Save.
//
// Reading guide: render.go holds the output formats and the shared look
// (fonts, colours, line styles); legend.go places legends (inside the data
// area, in the emptiest corner, or beside it); ticks.go labels axes with
// round numbers; then one file per plot (pooltimeline.go: a pool's
// instances in one timeline; fleet.go: a changing fleet's pools over
// time); dir.go, sweepdir.go (a sweep, read through results/sweepdir),
// rundir.go and timelinedir.go (a run, read through results/rundir) read
// saved results for DrawDir, and choice.go picks the sweep points whose attribution bars it
// draws.
package plot
