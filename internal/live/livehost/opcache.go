package livehost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/servers/status/phpstatus"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// OpcacheScriptName is the file name of advise's one-shot status script.
const OpcacheScriptName = "phptune-opcache.php"

// scriptDirPrefix names the status script's private directories.
const scriptDirPrefix = "phptune-opcache-"

// staleAfter is the age past which a status script's directory is one an
// advise killed outright (SIGKILL) left behind: a read takes seconds.
const staleAfter = time.Minute

// removeStale removes the status script directories under parent that a
// killed advise left behind: this user's real directories (not links)
// older than staleAfter.
func removeStale(parent string) {
	old, _ := filepath.Glob(filepath.Join(parent, scriptDirPrefix+"*"))
	for _, d := range old {
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) || time.Since(st.ModTime()) < staleAfter {
			continue
		}
		os.RemoveAll(d)
	}
}

// opcacheFunctions are the functions the script calls.
var opcacheFunctions = []string{"opcache_get_status", "opcache_get_configuration", "realpath_cache_size", "realpath_cache_get", "json_encode", "ini_get", "header", "ob_get_level", "ob_end_clean"}

// OpcacheRefusal says why pool p cannot run a script in dir, from its
// configuration ("" when nothing in it would block the script): a chroot
// (dir is outside it), security.limit_extensions without .php, an
// open_basedir that excludes dir, the script's functions in
// disable_functions, a TCP socket (whose listener cannot be checked).
func OpcacheRefusal(p Pool, dir string) string {
	s := p.Settings
	if v := s["chroot"]; v != "" {
		return fmt.Sprintf("pool %s runs chrooted to %s (chroot in %s): a script phptune writes outside it cannot be requested", p.Name, v, p.File)
	}
	if v, ok := s["security.limit_extensions"]; ok && !hasWord(v, ".php") {
		return fmt.Sprintf("pool %s's security.limit_extensions = %s does not allow .php: php-fpm would refuse the status script", p.Name, v)
	}
	for _, key := range []string{"php_admin_value[open_basedir]", "php_value[open_basedir]"} {
		v, ok := s[key]
		if !ok || v == "" {
			continue
		}
		inside := false
		for _, base := range strings.Split(v, ":") {
			if base != "" && filepath.IsAbs(base) && (dir+"/" == base || strings.HasPrefix(dir+"/", base) || strings.HasPrefix(dir+"/", strings.TrimSuffix(base, "/")+"/")) {
				inside = true
			}
		}
		if !inside {
			return fmt.Sprintf("pool %s's %s = %s excludes %s, where the status script would be: PHP would refuse to open it (give --opcache-dir a directory inside it that only root can write)", p.Name, key, v, dir)
		}
	}
	for _, key := range []string{"php_admin_value[disable_functions]", "php_value[disable_functions]"} {
		var blocked []string
		for _, f := range strings.Split(s[key], ",") {
			f = strings.ToLower(strings.TrimSpace(f))
			for _, need := range opcacheFunctions {
				if f == need {
					blocked = append(blocked, f)
				}
			}
		}
		if len(blocked) > 0 {
			return fmt.Sprintf("pool %s's %s disables %s, which the status script calls", p.Name, key, strings.Join(blocked, ", "))
		}
	}
	if !strings.HasPrefix(p.Listen, "unix:") {
		return fmt.Sprintf("pool %s listens on %s: phptune checks who holds a socket (SO_PEERCRED) only on a unix socket, and sends its script's path to no listener it has not checked", p.Name, p.Listen)
	}
	return ""
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, w) {
			return true
		}
	}
	return false
}

// ErrRefused is wrapped by ReadOpcache's refusals (nothing was written or
// sent).
var ErrRefused = errors.New("refused")

// ReadOpcache reads opcache's status through pool p of master m: it
// checks the pool's configuration (OpcacheRefusal) and parent (a
// directory only root, or this user, can write, as every directory above
// it), writes the status script into a new private directory under parent
// (0755, the script 0644: the pool's account reads it, nobody else can
// write), connects to the pool's socket only once SO_PEERCRED says the
// master holds it, requests the script, and removes the directory
// whatever happens (ctx cancelled included).
func ReadOpcache(ctx context.Context, m Master, p Pool, parent string) (*advise.Opcache, error) {
	if why := OpcacheRefusal(p, parent); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrRefused, why)
	}
	if err := CheckScriptDir(parent); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	removeStale(parent)
	dir, err := os.MkdirTemp(parent, scriptDirPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("making the status script's directory under %s: %w (run advise as root, or give --opcache-dir a directory of yours the pool can read)", parent, err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, OpcacheScriptName)
	f, err := os.OpenFile(script, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(phpstatus.Script); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Chmod(script, 0o644); err != nil { // whatever the umask
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addr := strings.TrimPrefix(p.Listen, "unix:")
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return dialMaster(ctx, address, m)
	}
	params := fcgi.Params(http.MethodGet, "/"+OpcacheScriptName, script, nil, nil)
	resp, err := fcgi.GetLimited(ctx, dial, "unix", addr, params, nil, phpstatus.MaxBytes)
	if err != nil {
		return nil, err
	}
	if resp.Status != http.StatusOK {
		hint := ""
		if resp.Status == http.StatusNotFound || resp.Status == http.StatusForbidden {
			hint = fmt.Sprintf(": the pool cannot open %s (php.ini's open_basedir, a private /tmp or mount namespace, or a limit of the pool): give --opcache-dir a directory the pool sees and may read", script)
		}
		return nil, fmt.Errorf("pool %s answered %d for the status script%s (\"%.120s\")", p.Name, resp.Status, hint, termsafe.Line(string(resp.Body)))
	}
	o, err := advise.ParseOpcache(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("pool %s's answer: %w", p.Name, err)
	}
	return o, nil
}

// dialMaster connects to a pool's unix socket and keeps the connection
// only when its listener is master m: its account and its process.
func dialMaster(ctx context.Context, addr string, m Master) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s is not a unix socket", addr)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = peercred.FromFD(int(fd)) }); err != nil || cerr != nil {
		c.Close()
		return nil, fmt.Errorf("reading the credentials of %s's listener: %v", addr, errors.Join(err, cerr))
	}
	if int(cred.Uid) != m.UID || int(cred.Pid) != m.PID {
		c.Close()
		return nil, fmt.Errorf("%w: %s is held by pid %d (uid %d), not by php-fpm's master %d (uid %d); the socket was replaced", ErrRefused, addr, cred.Pid, cred.Uid, m.PID, m.UID)
	}
	return c, nil
}

// CheckScriptDir says whether the status script's directory may be made
// under parent (see trustedDir).
func CheckScriptDir(parent string) error {
	if err := trustedDir(parent); err != nil {
		return fmt.Errorf("%s: %v", parent, err)
	}
	return nil
}

// trustedDir checks that dir and every directory above it is a real
// directory (no link) owned by root or by this user that no one else can
// write (a root-owned sticky directory such as /tmp above it is allowed:
// no one else can rename what root made in it).
func trustedDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("not an absolute path")
	}
	me := uint32(os.Geteuid())
	p := filepath.Clean(dir)
	for first := true; ; first = false {
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link", p)
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory", p)
		case sys.Uid != 0 && sys.Uid != me:
			return fmt.Errorf("%s belongs to uid %d: another account could replace what phptune writes under it", p, sys.Uid)
		case st.Mode().Perm()&0o022 != 0 && (first || st.Mode()&os.ModeSticky == 0 || sys.Uid != 0):
			return fmt.Errorf("%s can be written by other accounts (mode %v)", p, st.Mode().Perm())
		}
		if p == "/" {
			return nil
		}
		p = filepath.Dir(p)
	}
}
