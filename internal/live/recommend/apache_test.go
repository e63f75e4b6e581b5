package recommend

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// apacheCases are recommendations for the Apache servers, each from its
// server's defaults, as a tune of that server starts.
func apacheCases(t *testing.T) []struct {
	name       string
	start, rec knob.Config
} {
	event := config(t, "server=apache-event-fpm")
	prefork := config(t, "server=apache-prefork-modphp")
	return []struct {
		name       string
		start, rec knob.Config
	}{
		{"event-fpm-defaults", event, event},
		{"event-fpm-tuned", event, config(t, "server=apache-event-fpm", "pm=static", "pm.max_children=12", "listen=tcp",
			"apache.max_request_workers=425", "apache.event.server_limit=17", "apache.keepalive=off", "apache.access_log=off")},
		{"prefork-modphp-defaults", prefork, prefork},
		{"prefork-modphp-tuned", prefork, config(t, "server=apache-prefork-modphp", "apache.max_request_workers=12",
			"apache.prefork.start_servers=12", "apache.prefork.min_spare_servers=12", "apache.prefork.max_spare_servers=13",
			"apache.max_connections_per_child=1000", "opcache.validate_timestamps=off")},
	}
}

// TestApacheFilesGolden: every file of an Apache recommendation, against
// testdata/NAME/FILE (go test ./internal/live/recommend -update rewrites them).
func TestApacheFilesGolden(t *testing.T) {
	for _, c := range apacheCases(t) {
		t.Run(c.name, func(t *testing.T) {
			files := Files(c.start, c.rec, Target{PHPVersion: "8.2"})
			if _, ok := files[NginxFile]; ok {
				t.Errorf("nginx.conf written for %s", c.rec.Server())
			}
			if _, ok := files[PoolFile]; ok != knob.RunsFPM(c.rec.Server()) {
				t.Errorf("%s: pool fragment written: %v", c.rec.Server(), ok)
			}
			checkGolden(t, c.name, files)
		})
	}
}

// checkGolden compares files with testdata/name/ (rewritten with -update).
func checkGolden(t *testing.T, name string, files map[string]string) {
	t.Helper()
	goldentest.CheckDir(t, filepath.Join("testdata", name), files)
}

// TestApacheDropInAccepted runs `apache2 -t` on a minimal server that
// loads the drop-in's MPM and includes the drop-in, as Debian's
// apache2.conf includes conf-enabled/.
func TestApacheDropInAccepted(t *testing.T) {
	if !apache.Installed() {
		t.Skip("apache2 is not installed (/usr/sbin/apache2); run: phptune setup --with-test-tools")
	}
	bin, err := apache.Find()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range apacheCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := Files(c.start, c.rec, Target{PHPVersion: "8.2"})
			dropIn := filepath.Join(dir, "phptune.conf")
			if err := os.WriteFile(dropIn, []byte(files[ApacheFile]), 0o644); err != nil {
				t.Fatal(err)
			}
			mpm := "event"
			if !knob.RunsFPM(c.rec.Server()) {
				mpm = "prefork"
			}
			main := strings.Join([]string{
				"ServerRoot " + dir, "DefaultRuntimeDir " + dir, "PidFile " + dir + "/apache.pid", "ErrorLog " + dir + "/error.log",
				"Listen 127.0.0.1:1", "ServerName localhost",
				"LoadModule mpm_" + mpm + "_module " + apache.ModulesDir + "/mod_mpm_" + mpm + ".so",
				// Debian's mods-available/mpm_*.conf and KeepAlive come first.
				"KeepAlive On", "StartServers 5", "MaxRequestWorkers 150",
				"Include " + dropIn, ""}, "\n")
			conf := filepath.Join(dir, "httpd.conf")
			if err := os.WriteFile(conf, []byte(main), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, apache.TestArgs(dir, conf)...)
			cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Syntax OK") {
				t.Fatalf("apache2 -t refused the drop-in: %v\n%s\n%s", err, out, files[ApacheFile])
			}
			if strings.Contains(string(out), "AH0") {
				t.Errorf("apache2 -t warned about the drop-in (it would run other values):\n%s", out)
			}
		})
	}
}
