// Package sweepdir owns the format of a sweep's output directory (handoff
// sweep -o DIR, and merge): it writes and reads every file of it, and the
// plot and report packages read a sweep through it. A sweep directory
// holds (names in results/layout.go):
//
//	sweep.json                 the manifest: which scenario, inputs, shard and points this is
//	results.csv                one row per point of the last run (or merge)
//	replicas.csv               with replicas: each configuration's spread
//	points/<id>/scenario.yaml  its effective scenario
//	points/<id>/summary.json   its summary
//	points/<id>/point.json     the point's index, id, overrides, the hashes of
//	                           the files it read and of the two above; written
//	                           last: present = finished
//
// Every file is written through outdir.WriteIn: to a temporary name, then
// renamed, so a killed run never leaves a half-written file under a real
// name; and inside DIR only.
//
// Reading guide: point.go, a sweep's Point (its index, id and overrides,
// which scenarios/sweep expands and this package records) and a point's
// files, written and read back checked; manifest.go, sweep.json and
// whether a directory can take a sweep; table.go, results.csv, written
// and read back (ReadResults: the header split into varied columns and
// figures); replicas.go, replicas.csv.
package sweepdir
