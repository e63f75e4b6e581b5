// Package hostinfo describes the machine and the software a run measured:
// CPU model, cores, memory, kernel and its connection limits (package
// sysctl), and the versions of nginx, PHP, MariaDB, WordPress and phptune,
// for the report's environment section.
package hostinfo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// CollectCached is Collect with the programs' versions cached in the JSON
// file cache (none when empty), keyed by each binary's path, size and
// modification time: asking php, php-fpm, nginx and mariadbd costs about
// 0.15 CPU-seconds a run, which a benchmark of the generator would count
// as its own. An upgraded package changes the key, so the cache cannot go
// stale; a cache that cannot be read or written is ignored.
func CollectCached(ctx context.Context, cache string) *results.Environment {
	env := &results.Environment{Cores: runtime.NumCPU(), Versions: map[string]string{}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		env.CPUModel = CPUModel(b)
	}
	if mi, err := proc.SystemMeminfo(); err == nil {
		env.MemoryB = mi.Total
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	// The kernel's limits on queued and open connections, and phptune's
	// own open-file limit; the caller adds the lab's processes (Kernel).
	env.KernelLimits = sysctl.NewFS("/proc").Collect(nil)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	vc := loadVersionCache(cache)
	for name, cmd := range map[string][]string{
		"nginx":   {"nginx", "-v"},
		"php":     {"php", "-v"},
		"mariadb": {"mariadbd", "--version"},
	} {
		if v := vc.version(ctx, name, cmd...); v != "" {
			env.Versions[name] = v
		}
	}
	if fpm := findFPM(); fpm != "" {
		if v := vc.version(ctx, "php", fpm, "-v"); v != "" {
			env.Versions["php-fpm"] = v
		}
	}
	vc.save()
	if b, err := os.ReadFile("/usr/share/wordpress/wp-includes/version.php"); err == nil {
		if v := WordPressVersion(b); v != "" {
			env.Versions["wordpress"] = v
		}
	}
	env.Versions["phptune"] = Self()
	return env
}

// Self is phptune's own version: the module version, or the VCS revision
// the binary was built from.
func Self() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return rev + dirty
}

func findFPM() string {
	for _, v := range []string{"8.4", "8.3", "8.2", "8.1", "8.0", "7.4"} {
		p := "/usr/sbin/php-fpm" + v
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// versionCache maps "path size mtime" of a binary to its version.
type versionCache struct {
	file    string
	m       map[string]string
	changed bool
}

func loadVersionCache(file string) *versionCache {
	vc := &versionCache{file: file, m: map[string]string{}}
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			_ = json.Unmarshal(b, &vc.m)
		}
	}
	return vc
}

// version runs args (a program printing its version) unless the same
// binary's version is cached; program names the output's format.
func (vc *versionCache) version(ctx context.Context, program string, args ...string) string {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return ""
	}
	key := ""
	if fi, err := os.Stat(path); err == nil {
		key = fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
		if v, ok := vc.m[key]; ok && vc.file != "" {
			return v
		}
	}
	v := Version(program, output(ctx, append([]string{path}, args[1:]...)...))
	if key != "" && v != "" {
		vc.m[key] = v
		vc.changed = true
	}
	return v
}

func (vc *versionCache) save() {
	if vc.file == "" || !vc.changed {
		return
	}
	if b, err := json.Marshal(vc.m); err == nil {
		tmp := vc.file + ".tmp"
		if os.WriteFile(tmp, b, 0o644) == nil {
			_ = os.Rename(tmp, vc.file)
		}
	}
}

func output(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	return string(out)
}

// CPUModel returns the first "model name" of /proc/cpuinfo.
func CPUModel(cpuinfo []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var versionRE = map[string]*regexp.Regexp{
	"nginx":   regexp.MustCompile(`nginx/(\d+\.\d+\.\d+)`),
	"php":     regexp.MustCompile(`PHP (\d+\.\d+\.\d+)`),
	"mariadb": regexp.MustCompile(`Ver (\d+\.\d+\.\d+-MariaDB)`),
}

// Version extracts a program's version from what its version flag prints.
func Version(program, out string) string {
	re := versionRE[program]
	if re == nil {
		return ""
	}
	if m := re.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

var wpVersionRE = regexp.MustCompile(`\$wp_version\s*=\s*'([0-9][0-9A-Za-z.\-]{0,31})'`)

// WordPressVersion reads $wp_version from wp-includes/version.php.
func WordPressVersion(versionPHP []byte) string {
	if m := wpVersionRE.FindSubmatch(versionPHP); m != nil {
		return string(m[1])
	}
	return ""
}
