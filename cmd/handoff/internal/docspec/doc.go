// Package docspec reads the commands and doc: markers of the project's
// Markdown documents (README.md, docs/*.md), so that a test can run every
// command the documents show. It parses; it runs nothing.
//
// A command is every command of a fenced sh block (with \ continuations
// and # comments), and every inline code span that is one: "handoff ..."
// or "go run ./cmd/handoff ...", "go test|build ... PACKAGE", a program
// such as kubectl, sbatch or wc, or a flag example that sets a field
// ("--set path=value ..."). A marker is an HTML comment,
// <!-- doc:KIND name="value" ... -->, that applies to the next block,
// table or command span after it.
package docspec
