// Package parallel runs one simulation on more than one core, with outputs
// byte-identical to the run on one.
//
// The core (package sim) is a sequential event loop without goroutines,
// and stays one: what runs beside it are the stages on either side of
// it, each a goroutine this package owns, joined to the loop by a
// sequence that neither reorders nor changes anything:
//
//   - source.go: the workload's reader runs ahead of the loop (prefetch),
//     handing it requests in batches, in the order the source yields them;
//   - sink.go: the records' consumers (the summary's tally, requests.csv,
//     metrics.om) run behind it, handed each record, copied, in the order
//     the loop ended them.
//
// The loop sees the same requests and the consumers the same records as
// on one core, so every output is the same byte for byte. A workload whose
// next request depends on how the run goes — a closed loop's users, a
// session's turns — is read in step with the loop, as on one core.
// Pipeline.Note says in one line what runs where.
//
// Why the event loop itself is not split across cores — instance groups
// run window by window — is docs/PARALLEL.md's subject: the router's own
// bookkeeping is current and read at every decision by every load-aware
// router, and several same-instant orders follow the global queue, so
// windows of independent instances exist only for state-blind routers,
// and reproducing the global order across them is future work.
package parallel
