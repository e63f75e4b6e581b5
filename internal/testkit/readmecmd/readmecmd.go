// Package readmecmd reads the commands a README shows a user: every line of
// its fenced sh blocks, split into words as the shell would (quotes,
// backslashes, a trailing # comment), and rewrites them by the rule the
// README tests run them under (Shorten, Fill). It only parses: running the
// commands is the tests' job.
package readmecmd

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Command is one command line of a README's sh block.
type Command struct {
	Block int    // 1-based index of its fenced sh block
	Line  int    // 1-based line in the README
	Text  string // the line as written, comment removed and trimmed
	Args  []string
	// Comment is the text after an unquoted #, trimmed.
	Comment string
}

// String is the command as the README writes it.
func (c Command) String() string { return c.Text }

// Parse returns the commands of every fenced block whose info string is
// sh (```sh), in order. A line that is empty or only a comment is not a
// command; a line ending in an unquoted backslash continues on the next.
// A line the shell could not split (an unclosed quote) is an error naming
// its line.
func Parse(readme []byte) ([]Command, error) {
	var out []Command
	sc := bufio.NewScanner(bytes.NewReader(readme))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	inSh, block, n := false, 0, 0
	fence := ""
	pending, pendingLine := "", 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence == "" {
			if f, info, ok := openFence(trimmed); ok {
				fence = f
				inSh = info == "sh"
				if inSh {
					block++
				}
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
			if pending != "" {
				return nil, fmt.Errorf("line %d: the command continues past its block's end", pendingLine)
			}
			fence, inSh = "", false
			continue
		}
		if !inSh {
			continue
		}
		if pending == "" {
			pendingLine = n
		}
		text := line
		if pending != "" {
			text = pending + strings.TrimLeft(line, " \t")
		}
		if strings.HasSuffix(text, `\`) && !strings.HasSuffix(text, `\\`) {
			pending = strings.TrimRight(strings.TrimSuffix(text, `\`), " \t") + " "
			continue
		}
		pending = ""
		args, comment, err := Split(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", pendingLine, err)
		}
		if len(args) == 0 {
			continue
		}
		c := Command{Block: block, Line: pendingLine, Args: args, Comment: comment, Text: strings.TrimSpace(text)}
		if i := commentStart(text); i >= 0 {
			c.Text = strings.TrimSpace(text[:i])
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if fence != "" {
		return nil, fmt.Errorf("the README ends inside a fenced block opened with %s", fence)
	}
	return out, nil
}

// openFence reads a fence's opening line: ``` or ~~~ (three or more) and
// its info string's first word.
func openFence(line string) (fence, info string, ok bool) {
	for _, ch := range []string{"`", "~"} {
		if !strings.HasPrefix(line, ch+ch+ch) {
			continue
		}
		i := 0
		for i < len(line) && line[i] == ch[0] {
			i++
		}
		rest := strings.TrimSpace(line[i:])
		if f := strings.Fields(rest); len(f) > 0 {
			info = f[0]
		}
		return line[:i], info, true
	}
	return "", "", false
}

// Split splits a command line into words as a POSIX shell does for the
// forms a README uses: blanks separate words; 'single quotes' keep
// everything; "double quotes" keep everything but \" \\ \$ \`; a backslash
// outside quotes keeps the next character; an unquoted # at a word's start
// begins a comment, returned trimmed. Expansions ($VAR, globs) are not
// performed: a README command that needs them is not run as written.
func Split(line string) (args []string, comment string, err error) {
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return args, strings.TrimSpace(line[i+1:]), nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("an unclosed ' in %q", line)
			}
			word.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, "", fmt.Errorf(`an unclosed " in %q`, line)
			}
			inWord = true
		case c == '\\':
			if i+1 < len(line) { // a trailing backslash continues the line
				i++
				word.WriteByte(line[i])
				inWord = true
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, word.String())
	}
	return args, "", nil
}

// commentStart is the index of the line's unquoted # comment, or -1.
func commentStart(line string) int {
	var q byte
	prevBlank := true
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == '\\' && q == '"' {
				i++
			} else if c == q {
				q = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			q = c
		case c == '#' && prevBlank:
			return i
		}
		prevBlank = c == ' ' || c == '\t'
	}
	return -1
}
