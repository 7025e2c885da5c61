// Package docspec reads the commands, tables and doc: markers of the
// project's Markdown documents (README.md, docs/*.md), so that a test can
// run every command and remake every result table from the code as it is
// (cmd/handoff's TestDocs). It parses and renders; it runs nothing.
//
// # What counts as a command
//
// Every command of a fenced sh block (with \ continuations and # comments,
// one command per line or per && or |), and every inline code span that
// is one: "handoff ..." or "go run ./cmd/handoff ..." (a handoff command),
// "go test|build ... PACKAGE" (a go command), a program such as kubectl,
// sbatch or wc, or a script (an external command), and a flag example that
// sets or varies a field ("--set path=value ..."). A handoff command with
// a placeholder (an upper-case word such as SCENARIO or R, "...", "<file>",
// "path=value") is a synopsis; "handoff sweep" alone, a subcommand that
// needs arguments, is a mention. Other spans are prose.
//
// TestDocs runs handoff commands in-process from the repository root, with
// their -o and --trace paths moved to a temporary directory (later
// commands of the same block see the earlier ones' outputs, so "handoff
// plot out/chosen" and "handoff merge out/shard-*" work), and expects exit
// status 0. It checks a synopsis for its subcommand and flags; a go
// command for its packages and its -run and -bench names; an external
// command (which needs a doc:external marker) for the repository paths it
// names. A flag example must be part of some table row's command, or be
// run by a doc:with marker.
//
// # Markers
//
// A marker is an HTML comment, invisible when the Markdown is rendered,
// that applies to the next block, table or command span after it. Inside
// a paragraph, write it in the middle of a line (before the span, or at
// the end of the line before): a comment at the start of a line would end
// the paragraph. Attributes are name="value"; a value cannot hold '"'.
//
//	<!-- doc:exit status="1" -->
//	    the command (every command of the block) exits with this status;
//	    status="2 0 0 2" gives each command of a block its own
//	<!-- doc:external reason="needs a Kubernetes cluster" -->
//	    not run, only checked for syntax
//	<!-- doc:known-failure reason="..." -->
//	    the command fails for now; the test skips it, and fails once the
//	    command runs, so that the marker is removed
//	<!-- doc:with cmd="handoff validate scenarios/quickstart.yaml" -->
//	    a flag example is run after this command; cmd may repeat: with
//	    each="true" each --set or --vary runs alone, and one of the
//	    commands must accept it, else every command must accept them all
//	<!-- doc:output block="1" mask="wall \S+ s" -->
//	<!-- doc:output cmd="handoff validate ..." stream="stderr" status="1" -->
//	    the next plain block is what a command prints: the Nth command
//	    of the sh block above, or cmd; stream stdout (default) or stderr;
//	    status its exit status; what mask (a regular expression) matches
//	    is left as the document has it
//	<!-- doc:table
//	YAML spec
//	-->
//	    the next table is made by the spec's commands (below)
//
// # Table specs
//
// A row's command is the base (command: a handoff command; or block: N,
// the Nth command of the sh block above the table) followed by the row's
// args; its figures come from the summary.json of its output directory,
// or with file: from a CSV there. Keys:
//
//	command, block  the base command
//	labels          heads of the leading label columns
//	rows            a list of {cells, args | block, where, bold, exit}:
//	                cells are the label cells; block: N makes the row the
//	                Nth command of the sh block above; where (with file)
//	                selects the row's CSV records ("col=value ..."); bold
//	                lists 1-based columns shown in bold; exit is the
//	                command's exit status (default 0)
//	rows: flags     one row per entry "LABEL: `FLAGS`" of the "Rows'
//	                flags:" line after the table (skip: [labels] leaves
//	                some out; exit: {LABEL: status} gives exit statuses)
//	product         axes of [cell, args]: a row per combination, the first
//	                axis varying slowest
//	file, order     a CSV of the output directory (results.csv,
//	                goodput.csv), its records sorted by the order column
//	sources         NAME: {command, file, on: {its column: row where key},
//	                exit} joins another command's CSV records to each row
//	                (exit: its exit status, default 0)
//	columns         a list of {head, value, unit, format}
//
// A value is an expression, or a list of them (one per format verb): a
// dotted summary.json path (ttft_s.p99, requests.completed), sum(path)
// over lists (sum(instances.recompiles); a list's elements filtered by a
// key: sum(instances[role=decode].lockup_s)), owners(ttft_s) (each owner's
// share, "nvidia 94%, nobody 6%"); over CSV records one(col), min(col),
// max(col), at(col, key=value), last(col, cond) and next(col, cond) (col
// at the end of the leading run of records meeting cond — "meets" or
// "attainment>=0.9" — and in the record after it); "SOURCE:f(...)" reads
// a source; "a / b" divides. Unit scales every value: ms (from seconds),
// % (from a fraction), GB, TB (from bytes). Format is a format string —
// %d, %,d (thousands separators), %s and the float verbs — or a named
// formatter (rate_scale_attainment). A value that does not exist (the
// record after the last) makes the cell "—".
package docspec
