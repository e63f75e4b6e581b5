package livehost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
)

// CnfOption is one option of a MariaDB option file, as the server reads
// it: its group, its name with dashes written as underscores, its value
// (quotes and escapes undone) and where it is.
type CnfOption struct {
	Group, Name, Value string
	File               string
	Line               int
}

// cnfLine is one meaningful line of an option file.
type cnfLine struct {
	kind  byte // 'g' group, 'o' option, 'i' !include, 'd' !includedir
	group string
	name  string
	value string
	line  int
}

// cnfSpace is the space MariaDB trims around names and values: ASCII
// bytes only (my_print_defaults keeps a leading U+0085).
const cnfSpace = " \t\r\v\f"

// parseCnf reads an option file's text as MariaDB's my_load_defaults
// does: leading space skipped; '#' or ';' first is a comment; [group];
// !include FILE and !includedir DIR; otherwise name[=value], a '#'
// outside quotes ending the line, spaces around name and value trimmed,
// matching quotes around the value removed and its backslash escapes
// undone. An option before any group is an error, as for the server.
func parseCnf(text string) ([]cnfLine, error) {
	var out []cnfLine
	group := ""
	for n, raw := range strings.Split(text, "\n") {
		line := strings.TrimLeft(strings.TrimRight(raw, "\r"), " \t\v\f")
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '!':
			word, arg, _ := strings.Cut(line, " ")
			arg = strings.Trim(arg, cnfSpace)
			switch word {
			case "!include":
				out = append(out, cnfLine{kind: 'i', value: arg, line: n + 1})
			case "!includedir":
				out = append(out, cnfLine{kind: 'd', value: arg, line: n + 1})
			default:
				return nil, fmt.Errorf("line %d: an unknown !directive", n+1)
			}
			if arg == "" {
				return nil, fmt.Errorf("line %d: %s without a path", n+1, word)
			}
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("line %d: a [group] with no closing ']'", n+1)
			}
			group = strings.TrimSpace(line[1:end])
			out = append(out, cnfLine{kind: 'g', group: group, line: n + 1})
			continue
		}
		if group == "" {
			return nil, fmt.Errorf("line %d: an option before any [group]", n+1)
		}
		line = cutCnfComment(line)
		name, value, hasValue := strings.Cut(line, "=")
		name = strings.ReplaceAll(strings.Trim(name, cnfSpace), "-", "_")
		if name == "" {
			continue
		}
		if hasValue {
			value = unescapeCnf(strings.Trim(value, cnfSpace))
		}
		out = append(out, cnfLine{kind: 'o', group: group, name: name, value: value, line: n + 1})
	}
	return out, nil
}

// cutCnfComment cuts the line at the first '#' outside quotes.
func cutCnfComment(s string) string {
	var quote byte
	escape := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '\'' || c == '"') && !escape {
			switch quote {
			case 0:
				quote = c
			case c:
				quote = 0
			}
		}
		if quote == 0 && c == '#' {
			return s[:i]
		}
		escape = quote != 0 && c == '\\' && !escape
	}
	return s
}

// unescapeCnf drops matching quotes around a value and undoes its
// backslash escapes.
func unescapeCnf(v string) string {
	if len(v) > 1 && (v[0] == '"' || v[0] == '\'') && v[0] == v[len(v)-1] {
		v = v[1 : len(v)-1]
	}
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i != len(v)-1 {
			i++
			if r, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 's': ' ', '"': '"', '\'': '\'', '\\': '\\'}[v[i]]; ok {
				b.WriteByte(r)
			} else {
				b.WriteByte('\\')
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// Cnf is a MariaDB configuration read from disk: every option in the
// order the server reads it, and the directories !includedir names (in
// that order too: the last one's files are read last).
type Cnf struct {
	Files       []string
	Options     []CnfOption
	IncludeDirs []string
}

// Get returns the last value of name in any of groups ("" and false when
// none sets it).
func (c *Cnf) Get(name string, groups ...string) (string, bool) {
	name = strings.ReplaceAll(name, "-", "_")
	value, found := "", false
	for _, o := range c.Options {
		if o.Name == name && contains(groups, o.Group) {
			value, found = o.Value, true
		}
	}
	return value, found
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ServerGroups are the option groups mariadbd reads (version: "10.11").
func ServerGroups(version string) []string {
	g := []string{"mysqld", "server", "mariadb", "mariadbd", "client-server", "galera"}
	if version != "" {
		g = append(g, "mysqld-"+version, "mariadb-"+version, "mariadbd-"+version)
	}
	return g
}

// ReadCnf reads the option files files (those that exist; a missing one
// is skipped, as the server does) with the files they include. root is
// the host's root: on a copy (root other than "/") an absolute link
// target is taken inside it, and an include outside it is an error, so a
// copy never leads phptune to the real host's files. Every file and link
// must belong to root (or this process's user) and be writable by no one
// else: MariaDB's configuration is root's.
func ReadCnf(root string, files ...string) (*Cnf, error) {
	c := &Cnf{}
	var read func(path string, depth int, required bool) error
	read = func(path string, depth int, required bool) error {
		if depth > 8 {
			return fmt.Errorf("%s: includes nested deeper than 8", path)
		}
		real, err := resolveTrusted(root, path)
		if errors.Is(err, os.ErrNotExist) && !required {
			return nil
		}
		if err != nil {
			return err
		}
		b, err := saferead.Whole(real, maxConf, saferead.AnyOwner)
		if err != nil {
			return err
		}
		lines, err := parseCnf(string(b))
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		c.Files = append(c.Files, path)
		for _, l := range lines {
			switch l.kind {
			case 'o':
				c.Options = append(c.Options, CnfOption{Group: l.group, Name: l.name, Value: l.value, File: path, Line: l.line})
			case 'i':
				if err := inRoot(root, l.value); err != nil {
					return fmt.Errorf("%s:%d: %v", path, l.line, err)
				}
				if err := read(l.value, depth+1, true); err != nil {
					return err
				}
			case 'd':
				if err := inRoot(root, l.value); err != nil {
					return fmt.Errorf("%s:%d: %v", path, l.line, err)
				}
				dir := filepath.Clean(l.value)
				c.IncludeDirs = append(c.IncludeDirs, dir)
				entries, err := os.ReadDir(dir)
				if err != nil {
					return fmt.Errorf("%s:%d: !includedir %s: %v", path, l.line, dir, err)
				}
				var names []string
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".cnf") {
						names = append(names, e.Name())
					}
				}
				sort.Strings(names)
				for _, n := range names {
					if err := read(filepath.Join(dir, n), depth+1, true); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, f := range files {
		if err := read(f, 0, false); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// inRoot refuses an absolute path outside root (root "/" holds all).
func inRoot(root, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%q is not an absolute path", path)
	}
	if root == "/" {
		return nil
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is outside the host's root %s", path, root)
	}
	return nil
}

// resolveTrusted follows path's links at its last component (at most 8),
// each one owned by root or this process's user in directories only
// they can write (trustedDir: no link on the way, whoever could write
// one could swap the file between this check and the read), and
// returns the regular
// file they lead to, which must belong to root or this user and be
// writable by no one else. On a copy an absolute target is taken inside
// root.
func resolveTrusted(root, path string) (string, error) {
	me := uint32(os.Geteuid())
	for hops := 0; ; hops++ {
		// Each hop's directories, not resolved: a directory on the way
		// that is another account's link would pick the file read.
		if err := trustedDir(filepath.Dir(path)); err != nil {
			return "", fmt.Errorf("%s: %v", path, err)
		}
		st, err := os.Lstat(path)
		if err != nil {
			return "", err
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 0 && sys.Uid != me {
			return "", fmt.Errorf("%s belongs to uid %d: MariaDB's configuration must be root's (chown root: %s)", path, sys.Uid, path)
		}
		if st.Mode()&os.ModeSymlink == 0 {
			if !st.Mode().IsRegular() {
				return "", fmt.Errorf("%s is not a regular file", path)
			}
			if st.Mode().Perm()&0o022 != 0 {
				return "", fmt.Errorf("%s is writable by others (mode %v): chmod go-w %s", path, st.Mode().Perm(), path)
			}
			return path, nil
		}
		if hops == 8 {
			return "", fmt.Errorf("%s: more than 8 links", path)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		switch {
		case !filepath.IsAbs(target):
			target = filepath.Join(filepath.Dir(path), target)
		case root != "/":
			target = filepath.Join(root, target)
		}
		if err := inRoot(root, target); err != nil {
			return "", fmt.Errorf("%s links to %v", path, err)
		}
		path = target
	}
}
