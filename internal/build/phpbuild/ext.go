package phpbuild

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Module is one of the distro's shared extensions, as its mods-available
// ini file loads it.
type Module struct {
	Name     string // file name without .so: "mysqli", "opcache"
	Zend     bool   // zend_extension= (opcache)
	Priority int    // Debian loads conf.d files in this order (mysqlnd 10 before mysqli 20)
	// Path, when set, is loaded instead of NAME.so from the extension
	// directory (the build's own opcache).
	Path string
}

// ParseModIni reads one of Debian's /etc/php/X.Y/mods-available/NAME.ini
// files: "; priority=NN" and an extension= or zend_extension= line. ok is
// false when the file loads no extension.
func ParseModIni(text string) (m Module, ok bool) {
	m.Priority = 20 // Debian's default priority
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if p, found := strings.CutPrefix(line, "; priority="); found {
			if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n >= 0 && n < 1000 {
				m.Priority = n
			}
			continue
		}
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		key, val, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		key = strings.TrimSpace(key)
		if key != "extension" && key != "zend_extension" {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		val = val[strings.LastIndexByte(val, '/')+1:]
		val = strings.TrimSuffix(val, ".so")
		if val == "" || !validModName(val) {
			continue
		}
		m.Name, m.Zend, ok = val, key == "zend_extension", true
	}
	return m, ok
}

func validModName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return len(s) <= 64
}

// SortModules orders modules as Debian's conf.d loads them: by priority,
// then by name.
func SortModules(ms []Module) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Priority != ms[j].Priority {
			return ms[i].Priority < ms[j].Priority
		}
		return ms[i].Name < ms[j].Name
	})
}

// CheckArgs is the php-cli command line that loads every module in order
// with no ini file (-n) and prints "LOADED name" for each one that loaded.
func CheckArgs(extDir string, ms []Module) []string {
	args := []string{"-n", "-d", "extension_dir=" + extDir, "-d", "display_startup_errors=1", "-d", "error_reporting=-1"}
	var names []string
	for _, m := range ms {
		key := "extension"
		if m.Zend {
			key = "zend_extension"
		}
		file := m.Name + ".so"
		if m.Path != "" {
			file = m.Path
		}
		args = append(args, "-d", key+"="+file)
		names = append(names, m.Name)
	}
	script := `$l = array_map('strtolower', array_merge(get_loaded_extensions(), get_loaded_extensions(true)));` +
		`foreach (explode(',', '` + strings.Join(names, ",") + `') as $n) {` +
		` if (in_array($n, $l) || ($n === 'opcache' && in_array('zend opcache', $l))) echo "LOADED $n\n"; }`
	return append(args, "-r", script)
}

// ExtResult is what the check found for one module.
type ExtResult struct {
	Name   string `json:"name"`
	Loaded bool   `json:"loaded"`
	Reason string `json:"reason,omitempty"`
	// Own is true when the build's own copy (compiled from its source)
	// was checked, false for the distro's.
	Own bool `json:"own,omitempty"`
}

var (
	reUnable = regexp.MustCompile(`(?:Unable to load dynamic library|Failed loading Zend extension) '([^']+)' \(tried: (.*)\)`)
	reInit   = regexp.MustCompile(`(?:PHP )?(?:Warning|Fatal error|Core Warning):\s+(?:PHP Startup: )?([A-Za-z0-9_ -]+): Unable to initialize module`)
	reNeeds  = regexp.MustCompile(`Cannot load module "([^"]+)" because required module "([^"]+)" is not loaded`)
	reAPI    = regexp.MustCompile(`(Module|PHP)\s+compiled with (module API|build ID)=(\S+)`)
)

// ParseCheckOutput reads the combined output of the CheckArgs run and says,
// for each module, whether it loaded and if not why (PHP's own words: an
// undefined symbol, another module API, a missing dependency).
func ParseCheckOutput(out string, ms []Module) []ExtResult {
	if len(out) > 1<<20 {
		out = out[:1<<20]
	}
	loaded := map[string]bool{}
	reasons := map[string]string{}
	lines := strings.Split(out, "\n")
	var lastInit string
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		if n, ok := strings.CutPrefix(line, "LOADED "); ok {
			loaded[strings.TrimSpace(n)] = true
			continue
		}
		if m := reUnable.FindStringSubmatch(line); m != nil {
			name := strings.TrimSuffix(m[1][strings.LastIndexByte(m[1], '/')+1:], ".so")
			reasons[name] = innerReason(m[2])
			continue
		}
		if m := reNeeds.FindStringSubmatch(line); m != nil {
			reasons[strings.ToLower(m[1])] = fmt.Sprintf("needs module %s, which is not loaded (not in this build, or it failed to load)", m[2])
			continue
		}
		if m := reInit.FindStringSubmatch(line); m != nil {
			lastInit = strings.ToLower(strings.TrimSpace(m[1]))
			var api []string
			for _, l := range lines[i+1 : min(i+6, len(lines))] {
				if a := reAPI.FindStringSubmatch(l); a != nil {
					api = append(api, a[1]+" "+a[2]+" "+a[3])
				}
			}
			r := "unable to initialize module"
			if len(api) > 0 {
				r += ": " + strings.Join(api, ", ")
			}
			reasons[lastInit] = r
		}
	}
	res := make([]ExtResult, 0, len(ms))
	for _, m := range ms {
		r := ExtResult{Name: m.Name, Loaded: loaded[m.Name]}
		if !r.Loaded {
			r.Reason = reasons[m.Name]
			if r.Reason == "" {
				r.Reason = "not loaded (no reason printed)"
			}
		}
		res = append(res, r)
	}
	return res
}

// innerReason picks dlopen's message out of PHP's "tried:" list: "PATH
// (PATH: undefined symbol: x), PATH.so (...)" → "undefined symbol: x";
// a "cannot open" of a name PHP only guessed gives way to another entry's.
func innerReason(tried string) string {
	var reasons []string
	for _, entry := range strings.Split(tried, "), ") {
		i := strings.Index(entry, " (")
		if i < 0 {
			continue
		}
		r := strings.TrimSuffix(entry[i+2:], ")")
		if j := strings.Index(r, ": "); j >= 0 && strings.HasPrefix(r, "/") {
			r = r[j+2:]
		}
		reasons = append(reasons, strings.TrimSpace(r))
	}
	for _, r := range reasons {
		if !strings.HasPrefix(r, "cannot open shared object file") {
			return r
		}
	}
	if len(reasons) > 0 {
		return reasons[0]
	}
	return strings.TrimSpace(tried)
}

// SummarizeExt says in one line which modules did not load and why.
func SummarizeExt(rs []ExtResult) string {
	var bad []string
	n, own := 0, 0
	for _, r := range rs {
		if r.Loaded {
			n++
			if r.Own {
				own++
			}
			continue
		}
		bad = append(bad, fmt.Sprintf("%s (%s)", r.Name, r.Reason))
	}
	from := ""
	if own > 0 {
		from = fmt.Sprintf(" (%d of them built from this source)", own)
	}
	if len(bad) == 0 {
		return fmt.Sprintf("all %d extensions the distro ships load%s", n, from)
	}
	return fmt.Sprintf("%d of the %d extensions the distro ships load%s; not: %s", n, len(rs), from, strings.Join(bad, "; "))
}
