package docspec

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a document item is.
type Kind int

// The kinds of items.
const (
	Block     Kind = iota // a fenced code block
	Span                  // an inline code span that is a command or a flag example
	Table                 // a Markdown table
	FlagsLine             // a "Rows' flags:" paragraph
)

// Item is one thing in a document a check may concern, with the markers
// written just before it.
type Item struct {
	Kind     Kind
	Line     int       // 1-based first line (a block's opening fence)
	End      int       // 1-based line after the item (after a block's closing fence)
	Lang     string    // a block's info string
	Body     []string  // a block's or a table's lines
	Commands []Command // a sh block's or a span's commands
	Rows     []FlagRow // a "Rows' flags:" line's entries
	Markers  []Marker
	Above    *Item // a table's or block's nearest sh block above, if any
}

// FlagRow is one entry of a "Rows' flags:" line: a row's label and flags.
type FlagRow struct {
	Label string
	Flags Command
}

// Doc is a parsed Markdown document.
type Doc struct {
	Name  string
	Lines []string
	Items []*Item
}

// flagsPrefix starts a paragraph that lists each table row's flags.
const flagsPrefix = "Rows' flags:"

var (
	fence      = regexp.MustCompile("^```([^`]*)$")
	commentRe  = regexp.MustCompile(`(?s)<!--(.*?)-->`)
	spanRe     = regexp.MustCompile("`([^`]+)`")
	flagsEntry = regexp.MustCompile("([^;:]+?): `([^`]+)`")
)

// Parse reads a Markdown document: its fenced blocks, its tables, its
// command spans (see IsCommand), its "Rows' flags:" lines and the doc:
// markers in HTML comments, each attached to the next block, table or
// command span. A marker with nothing to attach to, and a command that
// does not split, are errors naming the line.
func Parse(name, text string) (*Doc, error) {
	p := &parser{doc: &Doc{Name: name, Lines: strings.Split(text, "\n")}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if len(p.pending) > 0 {
		return nil, fmt.Errorf("%s:%d: marker doc:%s has nothing after it to apply to", name, p.pending[0].Line, p.pending[0].Kind)
	}
	return p.doc, nil
}

// parser holds the state of one Parse.
type parser struct {
	doc     *Doc
	pending []Marker
	lastSh  *Item
}

// parse walks the lines, one block, table or paragraph at a time.
func (p *parser) parse() error {
	lines := p.doc.Lines
	for i := 0; i < len(lines); {
		var next int
		var err error
		switch line := lines[i]; {
		case fence.MatchString(strings.TrimSpace(line)):
			next, err = p.block(i)
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			next = p.table(i)
		case strings.TrimSpace(line) == "":
			next = i + 1
		default:
			next, err = p.paragraph(i)
		}
		if err != nil {
			return err
		}
		i = next
	}
	return nil
}

// block reads the fenced block opening at line i.
func (p *parser) block(i int) (int, error) {
	lines := p.doc.Lines
	lang := strings.TrimSpace(fence.FindStringSubmatch(strings.TrimSpace(lines[i]))[1])
	j := i + 1
	for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
		j++
	}
	if j == len(lines) {
		return 0, fmt.Errorf("%s:%d: code block never closed", p.doc.Name, i+1)
	}
	it := &Item{Kind: Block, Line: i + 1, End: j + 2, Lang: lang, Body: lines[i+1 : j], Above: p.lastSh}
	if lang == "sh" {
		cmds, err := SplitShell(p.doc.Name, i+2, strings.Join(it.Body, "\n"))
		if err != nil {
			return 0, err
		}
		it.Commands = cmds
		p.lastSh = it
	}
	p.add(it)
	return j + 1, nil
}

// table reads the table starting at line i.
func (p *parser) table(i int) int {
	lines := p.doc.Lines
	j := i
	for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|") {
		j++
	}
	p.add(&Item{Kind: Table, Line: i + 1, End: j + 1, Body: lines[i:j], Above: p.lastSh})
	for k := i; k < j; k++ {
		for _, s := range spanRe.FindAllStringSubmatch(lines[k], -1) {
			p.span(k+1, s[1])
		}
	}
	return j
}

// paragraph reads the paragraph starting at line i: its markers and code
// spans in order. A comment may run over blank lines.
func (p *parser) paragraph(i int) (int, error) {
	lines := p.doc.Lines
	j, open := i, false
	for j < len(lines) && (open || paragraphLine(lines[j])) {
		open = inComment(open, lines[j])
		j++
	}
	text := strings.Join(lines[i:j], "\n")
	if strings.HasPrefix(text, flagsPrefix) {
		return j, p.flagsLine(i, text)
	}
	return j, p.inline(i+1, text)
}

// inComment reports whether a comment is open after line, given whether
// one was open before it.
func inComment(open bool, line string) bool {
	for {
		if open {
			i := strings.Index(line, "-->")
			if i < 0 {
				return true
			}
			line, open = line[i+3:], false
			continue
		}
		i := strings.Index(line, "<!--")
		if i < 0 {
			return false
		}
		line, open = line[i+4:], true
	}
}

// paragraphLine reports whether a line continues a paragraph.
func paragraphLine(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && !fence.MatchString(t) && !strings.HasPrefix(t, "|")
}

// inline reads a paragraph's markers and command spans in their order;
// text starts at line first. Spans inside comments are not spans.
func (p *parser) inline(first int, text string) error {
	lineAt := func(off int) int { return first + strings.Count(text[:off], "\n") }
	comments := commentRe.FindAllStringSubmatchIndex(text, -1)
	at := 0
	for _, c := range append(comments, []int{len(text), len(text), len(text), len(text)}) {
		for _, s := range spanRe.FindAllStringSubmatchIndex(text[at:c[0]], -1) {
			p.span(lineAt(at+s[0]), text[at+s[2]:at+s[3]])
		}
		if c[0] == len(text) {
			break
		}
		if err := p.marker(lineAt(c[0]), text[c[2]:c[3]]); err != nil {
			return err
		}
		at = c[1]
	}
	return nil
}

// span adds a code span if it is a command or a flag example; other spans
// (names, paths, values) and spans that do not split are prose.
func (p *parser) span(line int, code string) {
	code = strings.Join(strings.Fields(code), " ")
	cmds, err := SplitShell(p.doc.Name, line, code)
	if err == nil && len(cmds) > 0 && IsCommand(cmds[0].Words) {
		p.add(&Item{Kind: Span, Line: line, End: line + 1, Commands: cmds})
	}
}

// flagsLine adds a "Rows' flags:" paragraph: entries "LABEL: `FLAGS`"
// separated by "; ".
func (p *parser) flagsLine(i int, text string) error {
	it := &Item{Kind: FlagsLine, Line: i + 1, End: i + 2 + strings.Count(text, "\n")}
	body := strings.Join(strings.Fields(strings.TrimPrefix(text, flagsPrefix)), " ")
	for _, m := range flagsEntry.FindAllStringSubmatch(body, -1) {
		cmds, err := SplitShell(p.doc.Name, i+1, m[2])
		if err != nil || len(cmds) != 1 {
			return fmt.Errorf("%s:%d: row %q: flags %q are not one command", p.doc.Name, i+1, m[1], m[2])
		}
		it.Rows = append(it.Rows, FlagRow{Label: strings.TrimSpace(m[1]), Flags: cmds[0]})
	}
	if len(it.Rows) == 0 {
		return fmt.Errorf("%s:%d: %s line with no `flags`", p.doc.Name, i+1, flagsPrefix)
	}
	p.doc.Items = append(p.doc.Items, it) // takes no markers
	return nil
}

// add appends an item, giving it the pending markers.
func (p *parser) add(it *Item) {
	it.Markers, p.pending = p.pending, nil
	p.doc.Items = append(p.doc.Items, it)
}

// IsCommand reports whether a code span's words are a command the checks
// concern: a handoff command ("handoff ..." or "go run ./cmd/handoff ..."),
// a go command with arguments, an external command (one of the programs
// in externals, a path to a program, a script), or a flag example that
// sets or varies a field ("--set path=value ...").
func IsCommand(words []string) bool {
	if len(words) == 0 {
		return false
	}
	switch w := words[0]; {
	case w == "handoff", w == "go" && len(words) >= 3:
		return true
	case strings.HasPrefix(w, "-"):
		return setsAField(words)
	default:
		return len(words) >= 2 && isExternal(w)
	}
}

// externals are the programs other than handoff and go that the documents
// run.
var externals = []string{"kubectl", "sbatch", "srun", "wc", "bash", "sh", "curl", "docker", "make", "git"}

// isExternal reports whether a command's first word runs a program other
// than handoff or go.
func isExternal(w string) bool {
	for _, e := range externals {
		if w == e {
			return true
		}
	}
	return strings.HasSuffix(w, ".sh") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "./")
}

// setsAField reports whether flag words include --set or --vary with a
// value.
func setsAField(words []string) bool {
	for i, w := range words[:len(words)-1] {
		if (w == "--set" || w == "--vary") && strings.Contains(words[i+1], "=") {
			return true
		}
	}
	return false
}

// HandoffArgs returns the arguments of a handoff command ("handoff ARGS"
// or "go run ./cmd/handoff ARGS"), and whether words are one.
func HandoffArgs(words []string) ([]string, bool) {
	switch {
	case len(words) >= 1 && words[0] == "handoff":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/handoff":
		return words[3:], true
	}
	return nil, false
}

// placeholder matches what marks a command as a synopsis rather than a
// command to run: an upper-case word (SCENARIO, DIR, R in R/s), a shell
// variable, an ellipsis, an <angle-bracketed> name, or "path=value".
var placeholder = regexp.MustCompile(`(^|[\s\[=:,])[A-Z][A-Z_]*($|[\s\]=:/,]|\.\.\.)|\$[A-Z_]+|\.\.\.|…|<[^>]+>|(^|\s|')path=`)

// HasPlaceholder reports whether a handoff command or a flag example holds
// a placeholder (go and external commands have none: "./..." is a package
// pattern and "-run XXX" a name that matches nothing).
func HasPlaceholder(c Command) bool {
	_, handoff := HandoffArgs(c.Words)
	return (handoff || strings.HasPrefix(c.Words[0], "-")) && placeholder.MatchString(c.Text)
}
