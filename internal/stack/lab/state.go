package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// Process is one process phptune started for a lab: the leader of its own
// process group (nginx master, php-fpm master, mariadbd).
type Process struct {
	Component string `json:"component"` // "nginx", "apache", "lighttpd", "caddy", "h2o", "php-fpm", "mariadb"
	PID       int    `json:"pid"`
	// StartTime is the process's start in clock ticks after boot
	// (/proc/PID/stat field 22): with the lab's BootID it tells this process
	// from a later one that got the same pid, which is never signalled.
	StartTime uint64 `json:"start_time"`
}

// Lab is a lab's recorded state (DIR/state.json). Everything a client needs to
// reach the stack is here; secrets are kept apart in DIR/secrets.json.
type Lab struct {
	// ID is random per lab: a lab taken down and brought up again under
	// the same name is another lab, and a stale copy of the old one's
	// state must not overwrite the new one's.
	ID    string `json:"id"`
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	App   string `json:"app"`
	State string `json:"state"` // "starting", "up", "restarting", "stopping"
	// OwnerPID (with OwnerStart, its start time) is the phptune process
	// that is starting, restarting or stopping the lab, or, for a lab made
	// by a tune or compare (OwnedBy set), the process the lab lives for; a
	// lab whose owner is gone is cleaned by the next command.
	OwnerPID   int    `json:"owner_pid,omitempty"`
	OwnerStart uint64 `json:"owner_start,omitempty"`
	// OwnedBy names the command that made the lab for itself ("tune",
	// "compare"); empty for labs made by lab up.
	OwnedBy string `json:"owned_by,omitempty"`
	// URL is the base URL of the web server, e.g. "http://127.0.0.1:38121".
	URL string `json:"url"`
	// FPMListen is php-fpm's socket as "unix:/path" or "tcp:127.0.0.1:PORT".
	FPMListen string `json:"fpm_listen"`
	// FPMPools, with fpm.pools above 1, holds every pool's socket in
	// FPMListen's form, the first pool's (FPMListen) first.
	FPMPools []string `json:"fpm_pools,omitempty"`
	// FPMStatusPath and FPMPingPath are the pool's pm.status_path and ping.path.
	FPMStatusPath string `json:"fpm_status_path"`
	// NginxStatusURL is nginx's stub_status (empty when the lab runs
	// another web server).
	NginxStatusURL string `json:"nginx_status_url"`
	// Server is the lab's web server (the server knob: nginx-fpm,
	// apache-event-fpm, apache-prefork-modphp, lighttpd-fpm, caddy-fpm,
	// h2o-fpm, unit); ServerStatusURL is its own status page (nginx's
	// stub_status, Apache's and lighttpd's mod_status, h2o's status
	// handler; empty for Caddy, which has none without its admin endpoint,
	// and for Unit, whose status is on UnitControl).
	Server          string `json:"server,omitempty"`
	ServerStatusURL string `json:"server_status_url,omitempty"`
	// UnitControl is unitd's control socket (server=unit): its /status is
	// Unit's status page. It lives in the lab account's run/ directory:
	// talk to it only through a peer-checked connection (unit.NewControl
	// with PeerUID).
	UnitControl string `json:"unit_control,omitempty"`
	// DocRoot is the document root; ScriptFilename is the front controller.
	DocRoot        string `json:"docroot"`
	ScriptFilename string `json:"script_filename"`
	// MariaDBSocket is set for apps that use MariaDB.
	MariaDBSocket string      `json:"mariadb_socket,omitempty"`
	Config        knob.Config `json:"config"`
	Processes     []Process   `json:"processes"`
	// User is the unprivileged account the stack runs as, UID and GID its ids.
	User string `json:"user"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	// DBUser, DBUID and DBGID are the account a site lab's MariaDB runs
	// as (DBUser; empty for other labs, whose MariaDB runs as User).
	DBUser string `json:"db_user,omitempty"`
	DBUID  int    `json:"db_uid,omitempty"`
	DBGID  int    `json:"db_gid,omitempty"`
	// Limits are the lab's CPU and memory caps (--cpus, --memory-max).
	Limits Limits `json:"limits,omitempty"`
	// FrontPage is what GET / answered when the lab came up.
	FrontPage *pagecheck.Page `json:"front_page,omitempty"`
	// PHPProfiler is the PHP sampler's clock while phptune profile runs
	// one ("cpu" or "wall"), empty otherwise (see SetPHPProfiler).
	PHPProfiler string `json:"php_profiler,omitempty"`
	// BootID is the kernel's boot id when the lab started: after a reboot no
	// recorded pid is trusted.
	BootID string `json:"boot_id"`
	// Seal, for a site lab (sealed.go), is its seal's directory; URL is
	// then "unix:" + HTTPSocket, the unix socket its web server also
	// listens on (the host's only way in), and Host the Host header its
	// requests carry. SiteNames resolve to the lab inside; SitePort and
	// SiteHTTPS are what PHP sees (SERVER_PORT, HTTPS).
	Seal       string   `json:"seal,omitempty"`
	HTTPSocket string   `json:"http_socket,omitempty"`
	Host       string   `json:"host,omitempty"`
	SiteNames  []string `json:"site_names,omitempty"`
	SitePort   int      `json:"site_port,omitempty"`
	SiteHTTPS  bool     `json:"site_https,omitempty"`
	// SitePool are the live pool's settings without a knob that a site
	// lab's pool carries as written (site.Start.Pool); SitePrepend is the
	// live pool's own auto_prepend_file and SiteNoCron says that WP-cron
	// is off for the measurement (a WordPress site: the lab's prepend
	// file defines DISABLE_WP_CRON, then runs SitePrepend's).
	// AppRoot is the directory a site lab overlays: the app's root that
	// holds its docroot and configuration (siteAppRoot), else DocRoot.
	// SiteFiles are the live pool's prepend and append files outside it,
	// and the include_path directories and php.ini's prepend and append
	// files outside it (siteCode), bound read-only into the seal.
	AppRoot   string   `json:"app_root,omitempty"`
	SiteFiles []string `json:"site_files,omitempty"`
	// SiteCode are the SiteFiles that siteCode added (include_path
	// directories, php.ini's prepend and append files), checked by
	// seal.CheckCodeSource when the lab was planned.
	SiteCode []string `json:"site_code,omitempty"`
	// SiteDBSockets are the MariaDB socket paths the site's
	// configuration names beside /run/mysqld/mysqld.sock: inside the
	// seal each leads to the lab's MariaDB (siteDBSockets).
	SiteDBSockets []string `json:"site_db_sockets,omitempty"`
	// SiteServed are the addresses of other machines the site names
	// that the lab answers at inside its seal (served.go); SiteDBIP the
	// one of them its MariaDB also listens on.
	SiteServed []ServedAddr `json:"site_served,omitempty"`
	SiteDBIP   string       `json:"site_db_ip,omitempty"`
	// SiteCaches say, one sentence each, what the cache servers the
	// site names (site.Site.Caches) lead to inside the seal: the lab's
	// own (Caches), or nothing (site.CacheInSeal), so its numbers are
	// without them.
	SiteCaches []string `json:"site_caches,omitempty"`
	// SiteAccessLogs are the access logs production's vhost writes
	// (site.Vhost.AccessLogs): its traffic, for --workload-from-log.
	SiteAccessLogs []site.AccessLog `json:"site_access_logs,omitempty"`
	// Caches are the Redis and Memcached servers the lab runs inside its
	// seal at the addresses the site names (siteCacheServers).
	Caches   []CacheServer `json:"caches,omitempty"`
	SitePool []string      `json:"site_pool,omitempty"`
	// SiteApache is, for a site Apache serves, what the lab's Apache
	// carries of its vhost (site.Start.Apache).
	SiteApache  *apache.Carried `json:"site_apache,omitempty"`
	SitePrepend string          `json:"site_prepend,omitempty"`
	SiteNoCron  bool            `json:"site_no_cron,omitempty"`
	// LiveKnobs is the knob file (DIR/live.knobs) holding the live site's
	// configuration, the lab's start: tune --lab starts from it.
	LiveKnobs string `json:"live_knobs,omitempty"`
	// DBCopy says where a site lab's database came from.
	DBCopy *DBCopy `json:"db_copy,omitempty"`
}

// ErrNoLab is returned by Open for a name that has no lab.
var ErrNoLab = errors.New("no such lab")

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// CheckName refuses names that would not make a safe directory name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: use 1-32 lower-case letters, digits and dashes, starting with a letter or digit", name)
	}
	return nil
}

// Open reads the state of the lab called name.
func Open(name string) (*Lab, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return readState(name)
}

// stateLimit bounds what is read of a state file.
const stateLimit = 4 << 20

// readState reads the state of the lab called name. The lab's directory
// comes from its name, never from the file; the file must be phptune's own
// (owned by the user running phptune, not a link) in a directory carrying
// phptune's marker.
func readState(name string) (*Lab, error) {
	dir := filepath.Join(Root(), name)
	data, err := saferead.Read(filepath.Join(dir, "state.json"), stateLimit, saferead.Mine)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (looked in %s); list labs with: phptune lab status", ErrNoLab, name, Root())
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: %v; take it down with: phptune lab down %s", name, err, name)
	}
	if !hasMarker(dir) {
		return nil, fmt.Errorf("lab %s has no phptune marker (made by an older phptune, or not a lab): its state is not trusted; take it down with: phptune lab down %s", name, name)
	}
	var l Lab
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("lab state %s is corrupt: %v; remove it with: phptune lab down %s", dir, err, name)
	}
	l.Name, l.Dir = name, dir
	return &l, nil
}

// refresh re-reads the lab's state once its lock is held: what another
// phptune changed since l was read (its processes, its configuration, its
// state) is what l holds then, and
// a lab that was taken down and brought up again under the same name
// (another ID) is refused rather than overwritten with a stale copy.
func (l *Lab) refresh() error {
	fresh, err := readState(l.Name)
	if err != nil {
		return err
	}
	if fresh.ID != l.ID {
		return fmt.Errorf("lab %s was taken down and brought up again since this phptune read it; open it again", l.Name)
	}
	*l = *fresh
	return nil
}

// writeState saves l atomically so a crash never leaves half a state file.
func (l *Lab) writeState() error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return writeOwned(filepath.Join(l.Dir, "state.json"), data, 0o600, -1)
}

// markerFile is phptune's own mark on a lab directory, written by the user
// running phptune (root, when root runs it) into a directory the lab
// account cannot write: only directories carrying it are ever removed
// without being named.
const markerFile = ".phptune-lab"

const markerText = "phptune lab directory (format 2); remove with: phptune lab down NAME\n"

// writeMarker marks dir as a lab and names the accounts its processes run
// as, so even a lab whose state
// is lost can be stopped without signalling anyone else.
func writeMarker(dir string, uids []int) error {
	text := markerText + "uids:"
	for _, u := range uids {
		text += " " + strconv.Itoa(u)
	}
	return writeOwned(filepath.Join(dir, markerFile), []byte(text+"\n"), 0o644, -1)
}

func readMarker(dir string) (string, bool) {
	data, err := saferead.Read(filepath.Join(dir, markerFile), 1024, saferead.Mine)
	return string(data), err == nil && strings.HasPrefix(string(data), markerText)
}

func hasMarker(dir string) bool {
	_, ok := readMarker(dir)
	return ok
}

// markerUIDs returns the accounts a lab's marker names (none when unmarked).
func markerUIDs(dir string) []int {
	text, ok := readMarker(dir)
	if !ok {
		return nil
	}
	_, list, _ := strings.Cut(text, "uids:")
	var out []int
	for _, f := range strings.Fields(list) {
		if u, err := strconv.Atoi(f); err == nil && u > 0 {
			out = append(out, u)
		}
	}
	return out
}
