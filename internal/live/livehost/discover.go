package livehost

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
)

// FPMHost is what apply needs of a php-fpm configuration on disk: where
// pool files are included from, and each pool's name, file, address and
// status page.
type FPMHost struct {
	Conf string // php-fpm.conf
	// Includes are the include globs, absolute.
	Includes []string
	Pools    []Pool
	// Global holds every key of the [global] sections as written, the
	// last value of each ("process_control_timeout").
	Global map[string]string
}

// Pool is one [pool] section as configured (the last value of each key
// wins, as in php-fpm).
type Pool struct {
	Name       string
	File       string // the file of its first section
	Listen     string // "unix:/path" or "tcp:HOST:PORT"
	StatusPath string
	// PM and MaxChildren are its process manager and pm.max_children as
	// configured ("" and 0 when not set: php-fpm refuses that).
	PM          string
	MaxChildren int64
	// Settings holds every key of its sections as written
	// ("php_admin_value[open_basedir]", "chroot"), the last value of each.
	Settings map[string]string
}

// Pool returns the pool called name.
func (h *FPMHost) Pool(name string) (Pool, bool) {
	for _, p := range h.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return Pool{}, false
}

// PoolNames lists the pools, for messages.
func (h *FPMHost) PoolNames() []string {
	var out []string
	for _, p := range h.Pools {
		out = append(out, p.Name)
	}
	return out
}

// maxConf bounds one configuration file read.
const maxConf = 1 << 20

// ReadFPM reads the php-fpm configuration conf and the pool files it
// includes (globs in [global] or in a pool section). A relative include
// is resolved as php-fpm does: against prefix (its -p) when set, otherwise
// against /usr. Files are read
// without following a link at their last component and are at most 1 MiB
// each.
func ReadFPM(conf, prefix string) (*FPMHost, error) {
	against := func(p, def string) string {
		if filepath.IsAbs(p) {
			return p
		}
		if prefix != "" {
			def = prefix
		}
		return filepath.Join(def, p)
	}
	h := &FPMHost{Conf: conf, Global: map[string]string{}}
	pools := map[string]*Pool{}
	var order []string
	var read func(path string, depth int) error
	read = func(path string, depth int) error {
		if depth > 4 {
			return fmt.Errorf("%s: includes nested deeper than 4", path)
		}
		b, err := saferead.Whole(path, maxConf, saferead.AnyOwner)
		if err != nil {
			return err
		}
		section := ""
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64<<10), maxConf)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == ';' || line[0] == '#' {
				continue
			}
			if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
				section = strings.TrimSpace(line[1 : len(line)-1])
				if section != "global" && pools[section] == nil {
					pools[section] = &Pool{Name: section, File: path, Settings: map[string]string{}}
					order = append(order, section)
				}
				continue
			}
			key, value, ok := strings.Cut(line, "=")
			if !ok {
				return fmt.Errorf("%s:%d: %q is not key = value", path, n, line)
			}
			key, value = strings.TrimSpace(key), unquote(strings.TrimSpace(value))
			if section != "global" && section != "" {
				value = strings.ReplaceAll(value, "$pool", section)
			}
			if section != "global" && section != "" && key != "include" {
				pools[section].Settings[key] = value
			}
			if (section == "global" || section == "") && key != "include" {
				h.Global[key] = value
			}
			switch {
			case key == "include":
				pattern := against(value, "/usr")
				h.Includes = append(h.Includes, pattern)
				matches, err := filepath.Glob(pattern)
				if err != nil {
					return fmt.Errorf("%s:%d: include %q: %v", path, n, value, err)
				}
				sort.Strings(matches)
				for _, m := range matches {
					if err := read(m, depth+1); err != nil {
						return err
					}
				}
			case section != "global" && section != "" && key == "listen":
				pools[section].Listen = listenAddr(value)
			case section != "global" && section != "" && key == "pm.status_path":
				pools[section].StatusPath = value
			case section != "global" && section != "" && key == "pm":
				pools[section].PM = value
			case section != "global" && section != "" && key == "pm.max_children":
				pools[section].MaxChildren, _ = strconv.ParseInt(value, 10, 64)
			}
		}
		return sc.Err()
	}
	if err := read(conf, 0); err != nil {
		return nil, err
	}
	for _, name := range order {
		h.Pools = append(h.Pools, *pools[name])
	}
	return h, nil
}

// unquote drops the double quotes around an INI value.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// listenAddr writes a pool's listen value as "unix:/path" or
// "tcp:HOST:PORT" (a bare port listens on every address; the probe uses
// loopback).
func listenAddr(v string) string {
	switch {
	case strings.HasPrefix(v, "/"):
		return "unix:" + v
	case !strings.Contains(v, ":"):
		return "tcp:127.0.0.1:" + v
	case strings.HasPrefix(v, "[::]:") || strings.HasPrefix(v, "0.0.0.0:"):
		return "tcp:127.0.0.1:" + v[strings.LastIndexByte(v, ':')+1:]
	}
	return "tcp:" + v
}
