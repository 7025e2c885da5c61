package docspec

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec is a table's doc:table marker: the command that makes each row and
// the columns to fill from its outputs. See the package doc for the keys.
type Spec struct {
	Command string            `yaml:"command"` // base command; each row's args follow it
	Block   int               `yaml:"block"`   // or: the base is the Nth command of the sh block above
	File    string            `yaml:"file"`    // rows read this CSV of the command's output directory; default summary.json
	Order   string            `yaml:"order"`   // CSV: a row's records sorted by this numeric column
	Sources map[string]Source `yaml:"sources"` // further CSVs, joined to each row
	Labels  []string          `yaml:"labels"`  // heads of the leading label columns
	Rows    RowList           `yaml:"rows"`
	Skip    []string          `yaml:"skip"`    // rows: flags: the labels of the line's rows this table leaves out
	Product [][][]string      `yaml:"product"` // or: rows as every combination of [cell, args] per axis
	Exit    map[string]int    `yaml:"exit"`    // exit status by row label, where not 0
	Columns []Column          `yaml:"columns"`
}

// Source is a further CSV a table joins to its rows: the records of File
// in Command's output directory whose columns in On (source column → row
// where key) equal the row's where values.
type Source struct {
	Command string            `yaml:"command"`
	File    string            `yaml:"file"`
	On      map[string]string `yaml:"on"`
	Exit    int               `yaml:"exit"` // the command's exit status
}

// RowSpec is one row of a spec's rows list.
type RowSpec struct {
	Cells []string `yaml:"cells"` // the label cells
	Args  string   `yaml:"args"`  // flags after the base command
	Block int      `yaml:"block"` // or: the row is the Nth command of the sh block above
	Where string   `yaml:"where"` // CSV: "column=value ..." selects the row's records
	Bold  []int    `yaml:"bold"`  // 1-based columns shown in bold
	Exit  int      `yaml:"exit"`  // the row's command's exit status
}

// RowList is a spec's rows: a list, or "flags" for the rows of the
// "Rows' flags:" line after the table.
type RowList struct {
	FromFlags bool
	List      []RowSpec
}

// UnmarshalYAML reads "flags" or a list of rows.
func (r *RowList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "flags" {
			return fmt.Errorf("line %d: rows: want a list or \"flags\", got %q", n.Line, n.Value)
		}
		r.FromFlags = true
		return nil
	}
	return n.Decode(&r.List)
}

// Column is one computed column: Value's expressions, scaled to Unit and
// printed with Format.
type Column struct {
	Head   string `yaml:"head"`
	Value  Exprs  `yaml:"value"`
	Unit   string `yaml:"unit"`   // ms, %, GB, TB or none
	Format string `yaml:"format"` // a format with one verb per value, or a named formatter
}

// Exprs is one expression or a list of them.
type Exprs []string

// UnmarshalYAML reads a scalar or a list.
func (e *Exprs) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*e = Exprs{n.Value}
		return nil
	}
	return n.Decode((*[]string)(e))
}

// ParseSpec reads a doc:table marker's YAML; unknown keys are errors, and
// their line numbers are the document's.
func ParseSpec(m Marker) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewBufferString(strings.Repeat("\n", m.Line-1) + m.Body))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("table spec: %v", err)
	}
	if len(s.Columns) == 0 {
		return nil, fmt.Errorf("table spec: no columns")
	}
	for _, c := range s.Columns {
		if c.Head == "" || len(c.Value) == 0 || c.Format == "" {
			return nil, fmt.Errorf("table spec: column %q needs head, value and format", c.Head)
		}
	}
	return &s, nil
}

// Row is one table row to make: its label cells, the command that makes
// it and what to read from that command's outputs.
type Row struct {
	Cells []string
	Cmd   Command
	Where map[string]string
	Bold  []int
	Exit  int
}

// Label is the row's label cells, joined by ", ".
func (r Row) Label() string { return strings.Join(r.Cells, ", ") }

// Expand lists the rows of the table it (a Table item of doc with a spec):
// from the rows list, the product, or the "Rows' flags:" line that follows
// the table.
func (s *Spec) Expand(doc *Doc, it *Item, specLine int) ([]Row, error) {
	var rows []Row
	var err error
	switch {
	case s.Rows.FromFlags:
		rows, err = s.flagRows(doc, it, specLine)
	case len(s.Product) > 0:
		rows, err = s.productRows(doc.Name, it, specLine)
	default:
		rows, err = s.listRows(doc.Name, it, specLine)
	}
	if err != nil {
		return nil, err
	}
	if s.Block > 0 {
		for i := range rows { // a block's command exits as the block's doc:exit says
			rows[i].Exit = BlockExit(it.Above, s.Block)
		}
	}
	return rows, s.checkRows(rows)
}

// BlockExit is the exit status the doc:exit marker of block gives its nth
// command (1-based): the one status, or the nth of a list; 0 without a
// marker or with a status that is not a number.
func BlockExit(block *Item, n int) int {
	if block == nil {
		return 0
	}
	for _, mk := range block.Markers {
		if mk.Kind != "exit" {
			continue
		}
		f := strings.Fields(mk.Attr("status"))
		if len(f) > 1 && n <= len(f) {
			f = f[n-1:]
		}
		if len(f) > 0 {
			code, _ := strconv.Atoi(f[0])
			return code
		}
	}
	return 0
}

// checkRows checks that every row has a cell per label column and that
// every exit entry names a row, and gives rows their exit statuses.
func (s *Spec) checkRows(rows []Row) error {
	if len(rows) == 0 {
		return fmt.Errorf("table spec: no rows")
	}
	seen := map[string]bool{}
	for i := range rows {
		if len(rows[i].Cells) != len(s.Labels) {
			return fmt.Errorf("table spec: row %q has %d label cells for %d labels", rows[i].Label(), len(rows[i].Cells), len(s.Labels))
		}
		if code, ok := s.Exit[rows[i].Label()]; ok {
			rows[i].Exit, seen[rows[i].Label()] = code, true
		}
	}
	for label := range s.Exit {
		if !seen[label] {
			return fmt.Errorf("table spec: exit names row %q, which the table does not have", label)
		}
	}
	return nil
}

// base returns the base command's words and where it is written.
func (s *Spec) base(file string, it *Item, specLine int) (Command, error) {
	if s.Block > 0 {
		return blockCommand(it, s.Block)
	}
	if s.Command == "" {
		return Command{}, fmt.Errorf("table spec: needs command or block")
	}
	return oneCommand(file, specLine, s.Command)
}

// blockCommand returns the nth command (from 1) of the sh block above it.
func blockCommand(it *Item, n int) (Command, error) {
	if it.Above == nil || n > len(it.Above.Commands) {
		return Command{}, fmt.Errorf("table spec: block %d: the sh block above has no command %d", n, n)
	}
	return it.Above.Commands[n-1], nil
}

// oneCommand splits text that must be one command.
func oneCommand(file string, line int, text string) (Command, error) {
	cmds, err := SplitShell(file, line, text)
	if err != nil {
		return Command{}, err
	}
	if len(cmds) != 1 {
		return Command{}, fmt.Errorf("%s:%d: %q is not one command", file, line, text)
	}
	return cmds[0], nil
}

// extend returns base followed by args.
func extend(base Command, args string) (Command, error) {
	if strings.TrimSpace(args) == "" {
		return base, nil
	}
	more, err := oneCommand(base.File, base.Line, args)
	if err != nil {
		return Command{}, err
	}
	base.Words = append(slices.Clip(base.Words), more.Words...)
	base.Text += " " + more.Text
	return base, nil
}

// flagRows makes one row per entry of the "Rows' flags:" line after it.
func (s *Spec) flagRows(doc *Doc, it *Item, specLine int) ([]Row, error) {
	fl := FlagsAfter(doc, it)
	if fl == nil {
		return nil, fmt.Errorf("table spec: rows: flags, but no %q line follows the table", flagsPrefix)
	}
	base, err := s.base(doc.Name, it, specLine)
	if err != nil {
		return nil, err
	}
	for _, label := range s.Skip {
		if !slices.ContainsFunc(fl.Rows, func(fr FlagRow) bool { return fr.Label == label }) {
			return nil, fmt.Errorf("table spec: skip names row %q, which the %s line does not have", label, flagsPrefix)
		}
	}
	var rows []Row
	for _, fr := range fl.Rows {
		if slices.Contains(s.Skip, fr.Label) {
			continue
		}
		cmd, err := extend(base, fr.Flags.Text)
		if err != nil {
			return nil, err
		}
		cmd.File, cmd.Line = fl.Rows[0].Flags.File, fl.Line
		rows = append(rows, Row{Cells: []string{fr.Label}, Cmd: cmd})
	}
	return rows, nil
}

// FlagsAfter returns the first "Rows' flags:" item after the table it.
func FlagsAfter(doc *Doc, it *Item) *Item {
	i := slices.Index(doc.Items, it)
	for _, next := range doc.Items[i+1:] {
		if next.Kind == FlagsLine {
			return next
		}
	}
	return nil
}

// productRows makes a row for every combination of the axes' entries, the
// first axis varying slowest.
func (s *Spec) productRows(file string, it *Item, specLine int) ([]Row, error) {
	base, err := s.base(file, it, specLine)
	if err != nil {
		return nil, err
	}
	rows := []Row{{Cmd: base}}
	for a, axis := range s.Product {
		var next []Row
		for _, r := range rows {
			for _, e := range axis {
				if len(e) != 2 {
					return nil, fmt.Errorf("table spec: product axis %d: want [cell, args], got %q", a+1, e)
				}
				cmd, err := extend(r.Cmd, e[1])
				if err != nil {
					return nil, err
				}
				next = append(next, Row{Cells: append(slices.Clip(r.Cells), e[0]), Cmd: cmd})
			}
		}
		rows = next
	}
	return rows, nil
}

// listRows makes the rows of the rows list.
func (s *Spec) listRows(file string, it *Item, specLine int) ([]Row, error) {
	var rows []Row
	for _, rs := range s.Rows.List {
		cmd, err := s.rowCommand(file, it, specLine, rs)
		if err != nil {
			return nil, err
		}
		where, err := parseWhere(rs.Where)
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Cells: rs.Cells, Cmd: cmd, Where: where, Bold: rs.Bold, Exit: rs.Exit})
	}
	return rows, nil
}

// rowCommand returns a listed row's command.
func (s *Spec) rowCommand(file string, it *Item, specLine int, rs RowSpec) (Command, error) {
	if rs.Block > 0 {
		return blockCommand(it, rs.Block)
	}
	base, err := s.base(file, it, specLine)
	if err != nil {
		return Command{}, err
	}
	return extend(base, rs.Args)
}

// parseWhere reads "column=value ..." pairs.
func parseWhere(text string) (map[string]string, error) {
	where := map[string]string{}
	for _, f := range strings.Fields(text) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("table spec: where: want column=value, got %q", f)
		}
		where[k] = v
	}
	return where, nil
}
