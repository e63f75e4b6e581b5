package seal

import (
	"strings"
	"testing"
)

// TestPlanIsAnAllowlist: the plan of a seal's file system carries /usr,
// the generated /etc with the lab's account, the seal's /dev, /run, /tmp
// and /proc, the caller's binds and the overlay, and nothing of the
// host's data directories.
func TestPlanIsAnAllowlist(t *testing.T) {
	src := t.TempDir() // the binds' sources need only exist
	spec := Spec{Dir: "/var/lib/phptune/labs/x/seal", Docroot: "/var/www/site", Hosts: []string{"site.test"},
		Accounts: []Account{{Name: "www-data", UID: 33, GID: 33}},
		Binds: []Bind{{Source: src, Target: "/var/lib/phptune/labs/x/run"},
			{Source: src, Target: "/var/lib/phptune/labs/x", ReadOnly: true}},
		Links: []Link{{Path: "/var/lib/mysql-panel/mysqld.sock", Target: "/run/mysqld/mysqld.sock"}}}
	steps, err := plan(spec)
	if err != nil {
		t.Skipf("no plan on this host: %v", err)
	}
	at := map[string]step{}
	order := map[string]int{}
	for i, s := range steps {
		at[s.Path] = s
		order[s.Path] = i
		for _, bad := range []string{"/home", "/srv", "/opt", "/var/lib/mysql", "/root", "/var/www", "/var/lib/phptune/labs"} {
			if s.Path == bad || (strings.HasPrefix(s.Path, bad+"/") && s.Path != spec.Docroot && !strings.HasPrefix(s.Path, "/var/lib/phptune/labs/x")) {
				t.Errorf("the plan carries %s (%s)", s.Path, s.Kind)
			}
		}
	}
	for path, kind := range map[string]string{"/usr": "bind", "/etc/passwd": "file", "/etc/hosts": "file", "/etc/resolv.conf": "file",
		"/dev/null": "bind", "/run": "tmpfs", "/tmp": "tmpfs", "/dev/shm": "tmpfs", "/proc": "proc", "/var/www/site": "overlay"} {
		if at[path].Kind != kind {
			t.Errorf("the plan's %s is %q, want %s", path, at[path].Kind, kind)
		}
	}
	if !at["/usr"].ReadOnly || at["/dev/null"].ReadOnly && !at["/dev/null"].Dev {
		t.Errorf("/usr must be read-only, /dev/null a device: %+v %+v", at["/usr"], at["/dev/null"])
	}
	if !strings.Contains(at["/etc/passwd"].Data, "www-data:x:33:33:") || !strings.Contains(at["/etc/hosts"].Data, "site.test") {
		t.Errorf("the generated /etc: passwd %q, hosts %q", at["/etc/passwd"].Data, at["/etc/hosts"].Data)
	}
	if l := at["/var/lib/mysql-panel/mysqld.sock"]; l.Kind != "link" || l.Source != "/run/mysqld/mysqld.sock" || order["/var/lib/mysql-panel/mysqld.sock"] < order["/run"] {
		t.Errorf("the link to the lab's socket is %+v (step %d, /run's %d), want a link made after /run", l, order["/var/lib/mysql-panel/mysqld.sock"], order["/run"])
	}
	if order["/var/lib/phptune/labs/x"] > order["/var/lib/phptune/labs/x/run"] {
		t.Error("a bind below another is mounted before it")
	}
}

// TestPlanOverlaysTheAppRoot: with an app root, the overlay is the app
// root's, at its real path, and there is no other of the docroot.
func TestPlanOverlaysTheAppRoot(t *testing.T) {
	spec := Spec{Dir: "/var/lib/phptune/labs/x/seal", Docroot: "/srv/app/public", AppRoot: "/srv/app"}
	steps, err := plan(spec)
	if err != nil {
		t.Skipf("no plan on this host: %v", err)
	}
	var overlays []step
	for _, s := range steps {
		if s.Kind == "overlay" {
			overlays = append(overlays, s)
		}
	}
	if len(overlays) != 1 || overlays[0].Path != "/srv/app" || overlays[0].Source != "/srv/app" || overlays[0].Upper != "/var/lib/phptune/labs/x/seal/overlay/upper" {
		t.Errorf("overlays %+v, want one of /srv/app at its own path", overlays)
	}
}
