// Package openmetrics writes a run's metrics as vLLM's Prometheus exporter
// would have exposed them, one OpenMetrics text file with a timestamp on
// every sample (handoff run -o DIR --metrics openmetrics: DIR/metrics.om),
// so that Prometheus (promtool tsdb create-blocks-from openmetrics) and the
// Grafana dashboards built for vLLM read a simulated fleet as they read a
// real one.
//
// The families, their types, label names and histogram buckets are those
// of vLLM's PrometheusStatLogger (vllm/v1/metrics/loggers.py; families.go
// lists each with where vLLM sets it). Every instance is one engine: the
// labels are model_name (the scenario's model) and engine (the instance's
// name), plus pool and role, which vLLM does not have.
//
// Time: a sample at simulated time t carries the timestamp Epoch + t, so
// that the file is the same on every run and Prometheus takes it (it
// refuses samples too far from the Unix epoch's present). Samples lie on a
// fixed grid, the run's timeline's (every 0.5 s, coarser for long runs).
// The gauges are the instance's state at each grid point; the counters and
// histograms are cumulative, each observation counted at the simulated
// time vLLM would have made it (a token's when it is produced, a
// request's timings when it finishes).
//
// Memory: a Recorder holds one delta per family, engine and grid point,
// within a budget of grid points over all engines (coarsening the grid
// when a run outgrows it), whatever the number of requests.
//
// Reading guide: families.go, what is written; recorder.go, the grid and
// how a request's record becomes observations; write.go, the text format.
package openmetrics
