package cli

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The production wiki test/realserver.sh runs: Debian's Apache on :8080
// beside nginx, its vhost in sites-enabled/wiki.test.conf, PHP handed by
// SetHandler "proxy:unix:..." to php8.2-fpm's pool www, and MediaWiki's
// LocalSettings.php naming the database wiki.
const (
	wikiVhost    = "/etc/apache2/sites-enabled/wiki.test.conf"
	wikiDocroot  = "/var/www/wiki"
	wikiSettings = wikiDocroot + "/LocalSettings.php"
	// The secrets LocalSettings.php holds: the database password, and
	// MediaWiki's own keys, which no setting of the output names.
	wikiPassword   = "wiki-secret"
	wikiSecretKey  = "3c1f0a9d6b2e4f8a7c5d9e1b0a2f4c6e8d0b2a4c6e8f0a1b3c5d7e9f1a3b5c7d"
	wikiUpgradeKey = "9f8e7d6c5b4a3921"
)

// wikiSite is what the test reads of phptune site --json: the
// command's JSON contract, decoded apart from package site's types (whose
// password does not decode back).
type wikiSite struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Vhost struct {
		Server    string   `json:"server"`
		File      string   `json:"file"`
		Line      int      `json:"line"`
		Names     []string `json:"names"`
		Root      string   `json:"root"`
		FastCGI   []string `json:"fastcgi"`
		FastCGIAt string   `json:"fastcgi_at"`
		Listens   []struct {
			Addr string `json:"addr"`
			Port int    `json:"port"`
			TLS  bool   `json:"tls"`
		} `json:"listens"`
	} `json:"vhost"`
	Also    []json.RawMessage `json:"also"`
	DocRoot struct {
		Path  string `json:"path"`
		Owner string `json:"owner"`
		Files int64  `json:"files"`
	} `json:"docroot"`
	Pool *struct {
		MasterPID  int    `json:"master_pid"`
		MasterConf string `json:"master_conf"`
		Name       string `json:"name"`
		Listen     string `json:"listen"`
		Verified   string `json:"verified"`
		User       string `json:"user"`
	} `json:"pool"`
	PHP *struct {
		Binary string `json:"binary"`
		Ini    string `json:"ini"`
	} `json:"php"`
	App *struct {
		Kind string `json:"kind"`
		File string `json:"file"`
		DB   struct {
			Driver   string `json:"driver"`
			Name     string `json:"name"`
			User     string `json:"user"`
			Password string `json:"password"`
			Host     string `json:"host"`
		} `json:"database"`
	} `json:"app"`
	DB *struct {
		Endpoint struct {
			Network string `json:"network"`
			Address string `json:"address"`
		} `json:"endpoint"`
		ServerPID int    `json:"server_pid"`
		Socket    string `json:"socket"`
		How       string `json:"how"`
	} `json:"db"`
}

// needRealServerApache skips a test unless it runs on test/realserver.sh's
// production server with its Apache in mode: "event" (the event MPM with
// proxy_fcgi to php8.2-fpm, the default) or "modphp" (prefork with
// mod_php: PHPTUNE_REALSERVER_APACHE=modphp). Debian's Apache runs one
// MPM at a time, so each mode is a run of the script of its own.
func needRealServerApache(t *testing.T, mode string) {
	t.Helper()
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	got := os.Getenv("PHPTUNE_REALSERVER_APACHE")
	if got == "" {
		got = "event"
	}
	if got != mode {
		t.Skipf("needs test/realserver.sh's Apache in mode %s (PHPTUNE_REALSERVER_APACHE=%s); this run's is %s", mode, mode, got)
	}
}

// TestSiteApacheOnProductionServer: phptune site finds test/realserver.sh's
// Apache-served wiki by its name, its alias and its document root, in text
// and JSON: the vhost (apache, port 8080, its file), the DocumentRoot, PHP
// through proxy_fcgi to php8.2-fpm's pool www whose running master holds
// the socket (by the kernel's socket table: the master of php8.2-fpm's pid
// file), that master's php.ini, MediaWiki's database wiki (user wiki at
// localhost) and the running MariaDB that answers there. The password and
// MediaWiki's keys are never printed. lab up --site of it is not tested
// here.
func TestSiteApacheOnProductionServer(t *testing.T) {
	needRealServerApache(t, "event")
	master := pidFile(t, "/run/php/php8.2-fpm.pid")
	for _, q := range []string{"wiki.test", "www.wiki.test", wikiDocroot} {
		out, errs, code := runCLI(t, "site", q)
		if code != 0 {
			t.Fatalf("site %s: exit %d\n%s%s", q, code, out, errs)
		}
		noWikiSecrets(t, "site "+q, out+errs)
		for _, want := range []string{
			"vhost       apache server at " + wikiVhost + ":1\n",
			"names       wiki.test www.wiki.test\n",
			"port 8080, http\n",
			"listens     *:8080",
			"docroot     " + wikiDocroot + " (root at " + wikiVhost + ":4)",
			"pool        www of php-fpm master " + strconv.Itoa(master) + " (/etc/php/8.2/fpm/php-fpm.conf)",
			"via proxy_fcgi (" + wikiVhost + ":10)",
			"listen    unix:/run/php/php8.2-fpm.sock (tied by the kernel",
			"php.ini   /etc/php/8.2/fpm/php.ini\n",
			"app         MediaWiki (database settings from " + wikiSettings + ":",
			"database  wiki, user wiki, password <redacted>, host localhost\n",
			"db          reaches unix:/run/mysqld/mysqld.sock\n",
			"(found by the kernel: the server holds the listening socket)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("site %s: no %q in\n%s", q, want, out)
			}
		}
	}
	for _, q := range []string{"wiki.test", wikiDocroot} {
		checkWikiJSON(t, q, master)
	}
}

// checkWikiJSON checks phptune site QUERY --json against the production
// wiki (see TestSiteApacheOnProductionServer); master is php8.2-fpm's.
func checkWikiJSON(t *testing.T, q string, master int) {
	t.Helper()
	out, errs, code := runCLI(t, "site", q, "--json")
	if code != 0 {
		t.Fatalf("site %s --json: exit %d\n%s%s", q, code, out, errs)
	}
	noWikiSecrets(t, "site "+q+" --json", out+errs)
	var s wikiSite
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("site %s --json: %v\n%s", q, err, out)
	}
	v := s.Vhost
	if v.Server != "apache" || v.File != wikiVhost || v.Line != 1 || strings.Join(v.Names, " ") != "wiki.test www.wiki.test" ||
		v.Root != wikiDocroot || len(v.Listens) != 1 || v.Listens[0].Port != 8080 || v.Listens[0].TLS || len(s.Also) != 0 {
		t.Errorf("site %s --json: vhost %+v (also %d), want Apache's wiki.test on *:8080 at %s:1", q, v, len(s.Also), wikiVhost)
	}
	if strings.Join(v.FastCGI, " ") != "unix:/run/php/php8.2-fpm.sock" || v.FastCGIAt != wikiVhost+":10" {
		t.Errorf("site %s --json: FastCGI %q at %q, want the vhost's SetHandler to php8.2-fpm's socket", q, v.FastCGI, v.FastCGIAt)
	}
	if s.Host != "wiki.test" || s.Port != 8080 || s.DocRoot.Path != wikiDocroot || s.DocRoot.Owner != "www-data" || s.DocRoot.Files < 4 {
		t.Errorf("site %s --json: host %q port %d docroot %+v", q, s.Host, s.Port, s.DocRoot)
	}
	if p := s.Pool; p == nil || p.Name != "www" || p.MasterPID != master || p.MasterConf != "/etc/php/8.2/fpm/php-fpm.conf" ||
		p.Listen != "unix:/run/php/php8.2-fpm.sock" || !strings.Contains(p.Verified, "kernel") || p.User != "www-data" {
		t.Errorf("site %s --json: pool %+v, want php8.2-fpm's www (master %d) verified by the kernel", q, p, master)
	}
	if s.PHP == nil || s.PHP.Ini != "/etc/php/8.2/fpm/php.ini" || s.PHP.Binary != "/usr/sbin/php-fpm8.2" {
		t.Errorf("site %s --json: php %+v, want php-fpm8.2 with /etc/php/8.2/fpm/php.ini", q, s.PHP)
	}
	if a := s.App; a == nil || a.Kind != "mediawiki" || a.File != wikiSettings || a.DB.Driver != "mysql" || a.DB.Name != "wiki" ||
		a.DB.User != "wiki" || a.DB.Host != "localhost" || a.DB.Password != "<redacted>" {
		t.Errorf("site %s --json: app %+v, want MediaWiki's database wiki, user wiki at localhost, password <redacted>", q, a)
	}
	d := s.DB
	if d == nil || d.Endpoint.Network != "unix" || d.Endpoint.Address != "/run/mysqld/mysqld.sock" || d.Socket != "/run/mysqld/mysqld.sock" ||
		!strings.Contains(d.How, "kernel") {
		t.Fatalf("site %s --json: db %+v, want the MariaDB holding /run/mysqld/mysqld.sock", q, d)
	}
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(d.ServerPID) + "/comm"); err != nil || strings.TrimSpace(string(comm)) != "mariadbd" {
		t.Errorf("site %s --json: db server pid %d is %q (%v), want the running mariadbd", q, d.ServerPID, comm, err)
	}
}

// noWikiSecrets fails when out holds a secret of LocalSettings.php.
func noWikiSecrets(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{wikiPassword, wikiSecretKey, wikiUpgradeKey} {
		if strings.Contains(out, s) {
			t.Errorf("%s printed a secret of %s (%.8s...)", what, wikiSettings, s)
		}
	}
}

// pidFile is the pid a server's pid file holds.
func pidFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}
