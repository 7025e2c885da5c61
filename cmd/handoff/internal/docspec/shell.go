package docspec

import (
	"fmt"
	"strings"
)

// Command is one shell command as a document writes it: its words after
// quote removal, where it starts, and the text it was read from.
type Command struct {
	File  string   // the document
	Line  int      // 1-based line of the command's first word
	Text  string   // the command as written, blanks collapsed
	Words []string // the words, quotes and escapes removed
}

// Where names the command's place for messages: "README.md:42".
func (c Command) Where() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// splitter turns shell text into commands word by word.
type splitter struct {
	cmds  []Command
	words []string
	text  strings.Builder // the current command's source
	word  strings.Builder
	in    bool // inside a word
	line  int  // the current line
	start int  // line of the current command's first word
}

// SplitShell splits shell text (a code block's body or one code span) into
// commands, the way a POSIX shell reads them: words separated by blanks,
// single quotes literal, double quotes with backslash escapes, a backslash
// before a newline joins two lines, '#' at the start of a word comments to
// the end of the line, and a newline, ';', '|', '&&' or '||' ends a
// command. Line numbers count from firstLine. An unterminated quote is an
// error naming its line. Redirections, substitutions and globs are left in
// the words as written.
func SplitShell(file string, firstLine int, text string) ([]Command, error) {
	s := &splitter{line: firstLine}
	for i := 0; i < len(text); i++ {
		n, err := s.step(text, i)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, s.line, err)
		}
		i += n
	}
	s.endCommand()
	for i := range s.cmds {
		s.cmds[i].File = file
	}
	return s.cmds, nil
}

// step reads the text at i and returns how many bytes past i it consumed.
func (s *splitter) step(text string, i int) (int, error) {
	c := text[i]
	switch {
	case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
		s.endWord()
		s.line++
		s.text.WriteByte(' ')
		return 1, nil
	case c == '\\' && i+1 < len(text):
		s.add(text[i+1 : i+2])
		s.text.WriteString(text[i : i+2])
		return 1, nil
	case c == '\'' || c == '"':
		return s.quoted(text, i)
	case c == '#' && !s.in:
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			return len(text) - i - 1, nil
		}
		return end - 1, nil
	case c == '\n':
		s.endCommand()
		s.line++
	case c == ';' || c == '|' || c == '&':
		s.endCommand()
		if i+1 < len(text) && text[i+1] == c {
			return 1, nil
		}
	case c == ' ' || c == '\t':
		s.endWord()
		s.text.WriteByte(' ')
	default:
		s.add(text[i : i+1])
		s.text.WriteByte(c)
	}
	return 0, nil
}

// quoted reads a quoted string starting at i, which is its quote.
func (s *splitter) quoted(text string, i int) (int, error) {
	q := text[i]
	var b strings.Builder
	j := i + 1
	for ; j < len(text) && text[j] != q; j++ {
		if q == '"' && text[j] == '\\' && j+1 < len(text) && strings.IndexByte("\"\\$`", text[j+1]) >= 0 {
			j++
		}
		if text[j] == '\n' {
			s.line++
		}
		b.WriteByte(text[j])
	}
	if j == len(text) {
		return 0, fmt.Errorf("unterminated %c quote", q)
	}
	s.add(b.String())
	s.text.WriteString(text[i : j+1])
	return j - i, nil
}

// add appends to the current word, starting one if needed.
func (s *splitter) add(part string) {
	if !s.in && len(s.words) == 0 {
		s.start = s.line
	}
	s.in = true
	s.word.WriteString(part)
}

// endWord ends the current word, if any.
func (s *splitter) endWord() {
	if s.in {
		s.words = append(s.words, s.word.String())
		s.word.Reset()
		s.in = false
	}
}

// endCommand ends the current command, if it has words.
func (s *splitter) endCommand() {
	s.endWord()
	if len(s.words) > 0 {
		text := strings.Join(strings.Fields(s.text.String()), " ")
		s.cmds = append(s.cmds, Command{Line: s.start, Text: text, Words: s.words})
	}
	s.words, s.in = nil, false
	s.text.Reset()
}
