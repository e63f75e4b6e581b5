// Package ansible writes an Ansible playbook and role that put a
// recommendation on a fleet of hosts the way phptune apply puts it on one:
// php-fpm, PHP, nginx and MariaDB drop-ins next to the distro's files
// (never editing them), each server's own check of its whole
// configuration, graceful reloads (MariaDB's variables set live, never a
// restart), a health check, and on any failure the previous files and
// values back and the servers reloaded. The play rolls out one host at a time (serial) and stops at
// the first host that fails (max_fail_percentage: 0).
//
// The package is pure: Role returns the files; the CLI writes them.
package ansible

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/knob"
)

// RoleName is the role's directory under roles/.
const RoleName = "phptune_apply"

// Options say which pool and PHP branch the role is for.
type Options struct {
	// Pool is the php-fpm pool the drop-in reopens ("www").
	Pool string
	// PHPVersion is the hosts' PHP branch ("8.2"): the default paths
	// (/etc/php/8.2/fpm, php-fpm8.2, php8.2-fpm.service) follow it.
	PHPVersion string
	// Source says where the recommendation came from, for the files'
	// headers (a tune's directory or a knob file).
	Source string
}

var (
	poolName   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	phpVersion = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`)
)

// ByRole is the drop-ins' header when the role writes them.
var ByRole = livehost.Writer{Name: "phptune's Ansible role (phptune export ansible)", Undo: "ansible-playbook rollback.yml"}

// Role renders the playbook, the rollback playbook, the role and a README
// for rec. It refuses what a drop-in cannot carry to a live host, as
// phptune apply does: another server's configuration, several pools, a
// move of the pool's socket; and a recommendation with nothing for
// php-fpm, PHP, nginx's access log or MariaDB.
func Role(rec knob.Config, o Options) (map[string][]byte, error) {
	if !poolName.MatchString(o.Pool) {
		return nil, fmt.Errorf("--pool %q: a pool name is letters, digits, '.', '_' and '-'", o.Pool)
	}
	if !phpVersion.MatchString(o.PHPVersion) {
		return nil, fmt.Errorf("--php-version %q: give the hosts' PHP branch, e.g. 8.2", o.PHPVersion)
	}
	if !knob.RunsFPM(rec.Server()) {
		return nil, fmt.Errorf("the recommendation is for server=%s, which runs no php-fpm; the role writes php-fpm, PHP, nginx and MariaDB drop-ins only", rec.Server())
	}
	if n := rec.Pools(); n > 1 {
		return nil, fmt.Errorf("%s=%d: the role does not split a live pool into %d; write the pools from the recommendation's php-fpm-pool.conf and nginx's upstream by hand", knob.PoolsKnob, n, n)
	}
	if rec["listen"] == "tcp" {
		return nil, fmt.Errorf("listen=tcp: the role does not move pool %s's socket, which the web server passes requests to; change both by hand from the recommendation", o.Pool)
	}
	pool, ini, knobs := livehost.RenderFPM(o.Pool, "pool.d/"+o.Pool+".conf", ByRole, rec)
	nginx, nginxKnobs := renderNginx(rec)
	db := livehost.MariaDBSettings(rec)
	if pool == nil && ini == nil && nginx == nil && len(db) == 0 {
		return nil, fmt.Errorf("the recommendation changes no php-fpm, PHP, nginx access log or MariaDB setting: there is nothing for the role to write")
	}
	knobs = append(knobs, nginxKnobs...)
	files := map[string][]byte{}
	role := "roles/" + RoleName + "/"
	var vars strings.Builder
	list := func(name string, items []string) {
		if len(items) == 0 {
			fmt.Fprintf(&vars, "%s: []\n", name)
			return
		}
		fmt.Fprintf(&vars, "%s:\n%s", name, strings.Join(items, ""))
	}
	item := func(file, dirVar string) string {
		return fmt.Sprintf("  - src: %s\n    dest: \"{{ %s }}/%s\"\n", file, dirVar, dropInName(file))
	}
	var fpm, web, cnf []string
	if pool != nil {
		files[role+"files/"+livehost.PoolDropInName] = pool
		fpm = append(fpm, item(livehost.PoolDropInName, "phptune_fpm_pool_dir"))
	}
	if ini != nil {
		files[role+"files/"+livehost.IniDropInName] = ini
		fpm = append(fpm, item(livehost.IniDropInName, "phptune_fpm_ini_dir"))
	}
	if nginx != nil {
		files[role+"files/"+nginxFile] = nginx
		web = append(web, item(nginxFile, "phptune_nginx_dropin_dir"))
	}
	var names, values []string
	if len(db) > 0 {
		cnfText := "# Written by " + ByRole.Name + ": the recommendation's MariaDB settings,\n# read after the distribution's files. Undo: ansible-playbook rollback.yml.\n[mysqld]\n"
		for _, s := range db {
			cnfText += s.Var + " = " + s.Value + "\n"
			v := s.Value
			if k, _ := knob.Lookup(s.Knob); k.Kind == knob.Size {
				v = fmt.Sprint(rec.Bytes(s.Knob))
			}
			names, values = append(names, s.Var), append(values, v)
			knobs = append(knobs, s.Knob+"="+s.Value)
		}
		files[role+"files/"+livehost.MariaDBDropInName] = []byte(cnfText)
		cnf = append(cnf, item(livehost.MariaDBDropInName, "phptune_mariadb_dropin_dir"))
	}
	vars.WriteString("# The drop-ins this recommendation needs (" + strings.Join(knobs, " ") + ").\n")
	list("phptune_dropins", fpm)
	list("phptune_nginx_dropins", web)
	list("phptune_mariadb_dropins", cnf)
	vars.WriteString("# MariaDB's variables set live (SET GLOBAL), in this order, and their values.\n")
	list("phptune_mariadb_vars", quoteAll(names))
	list("phptune_mariadb_values", quoteAll(values))
	header := "# Written by phptune export ansible"
	if o.Source != "" {
		header += " from " + oneLine(o.Source)
	}
	header += ".\n"
	files["playbook.yml"] = []byte(header + playbook)
	files["rollback.yml"] = []byte(header + rollback)
	files[role+"defaults/main.yml"] = []byte(header + fmt.Sprintf(defaults, o.PHPVersion))
	files[role+"vars/main.yml"] = []byte(header + vars.String())
	files[role+"tasks/main.yml"] = []byte(header + tasksMain)
	files[role+"tasks/reload.yml"] = []byte(header + tasksReload)
	files[role+"tasks/reload-nginx.yml"] = []byte(header + tasksReloadNginx)
	files[role+"tasks/mariadb-set.yml"] = []byte(header + tasksMariaDBSet)
	files[role+"tasks/health.yml"] = []byte(header + tasksHealth)
	files["README.md"] = readme(knobs, manual(rec), o)
	return files, nil
}

// nginxFile is the nginx drop-in's name in the role's files/ (the same
// name as php-fpm's pool drop-in on the hosts, in another directory).
const nginxFile = "nginx-" + livehost.NginxDropInName

// dropInName is a role file's name on the hosts.
func dropInName(file string) string {
	if file == nginxFile {
		return livehost.NginxDropInName
	}
	return file
}

// renderNginx is the nginx drop-in of rec: what an http-level file in
// conf.d may carry on any host, whatever its nginx.conf sets. That is
// access_log off alone (it cancels the level's logs beside nginx.conf's
// own access_log); keepalive_timeout is set in Debian's nginx.conf, where
// a second one is refused, and the main and events settings cannot be
// included: those are left to the README, as apply prints them.
func renderNginx(rec knob.Config) ([]byte, []string) {
	if rec["nginx.access_log"] != "off" || !rec.Relevant("nginx.access_log") {
		return nil, nil
	}
	return []byte("# Written by " + ByRole.Name + ": read at http level after nginx.conf.\n# Undo: ansible-playbook rollback.yml (or remove this file and reload nginx).\naccess_log off;\n"),
		[]string{"nginx.access_log=off"}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("  - %q\n", s)
	}
	return out
}

// manual lists the recommendation's settings the role does not write:
// the web server's, but nginx's access log (see renderNginx).
func manual(rec knob.Config) []string {
	var out []string
	for _, ch := range knob.Diff(knob.Defaults(), rec) {
		k, _ := knob.Lookup(ch.Knob)
		switch {
		case k.Component == knob.PHPFPM, k.Component == knob.PHP, k.Component == knob.Server, k.Component == knob.Build, k.Component == knob.MariaDB:
		case ch.Knob == "nginx.access_log" && rec.Relevant(ch.Knob):
		default:
			out = append(out, ch.Knob+"="+ch.To)
		}
	}
	sort.Strings(out)
	return out
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func readme(knobs, manual []string, o Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# phptune's recommendation as an Ansible role\n\nWritten by `phptune export ansible`")
	if o.Source != "" {
		fmt.Fprintf(&b, " from `%s`", oneLine(o.Source))
	}
	fmt.Fprintf(&b, " for pool `%s` on PHP %s.\n\nIt sets: `%s`.\n\n", o.Pool, o.PHPVersion, strings.Join(knobs, "`, `"))
	b.WriteString(readmeBody)
	if len(manual) > 0 {
		fmt.Fprintf(&b, "\n## Not applied by the role\n\n`%s`: nginx's worker_processes, events and listen cannot be set from an included file, and a second keepalive_timeout at http level is refused (Debian's nginx.conf sets one); other web servers' settings are theirs. Merge them by hand from the recommendation's files (the tune's directory), as `phptune apply --dry-run` prints them as a patch.\n", strings.Join(manual, "`, `"))
	}
	return []byte(b.String())
}
