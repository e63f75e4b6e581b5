package lab

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/servers/nginx"
)

// TestCheckServer: CheckServer finds a server as lab up would, and says
// what to install or build when it cannot, without starting anything.
func TestCheckServer(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir()) // no Unit build in it
	if err := CheckServer("nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("an unknown server: %v", err)
	}
	for _, s := range knob.Servers {
		err := CheckServer(s)
		_, _, webErr := webFor(map[string]string{knob.ServerKnob: s})
		if (err == nil) != (webErr == nil) {
			t.Errorf("%s: CheckServer %v, lab up would say %v", s, err, webErr)
		}
		if err != nil && !strings.Contains(err.Error(), "install") && !strings.Contains(err.Error(), "build") {
			t.Errorf("%s: %v does not say how to get it", s, err)
		}
	}
	if _, err := nginx.Find(); err == nil {
		if err := CheckServer(knob.NginxFPM); err != nil {
			t.Errorf("nginx-fpm with nginx installed: %v", err)
		}
	}
	if _, err := apache.Find(); err != nil {
		if err := CheckServer(knob.ApacheEventFPM); err == nil || !strings.Contains(err.Error(), "apt-get install apache2-bin") {
			t.Errorf("apache-event-fpm without Apache: %v", err)
		}
	}
	if _, err := exec.LookPath("unitd"); err != nil {
		err := CheckServer(knob.UnitPHP)
		if err == nil || !strings.Contains(err.Error(), "phptune build unit --source") {
			t.Errorf("unit without unitd or a build: %v", err)
		}
	}
	if entries, _ := os.ReadDir(Root()); len(entries) != 0 {
		t.Errorf("CheckServer created labs: %v", entries)
	}
}

func TestLastPHPError(t *testing.T) {
	for _, c := range []struct{ logs, want string }{
		{"", ""},
		{"NOTICE: ready to handle connections\n", ""},
		{"[29-Nov-2026 08:00:00] WARNING: [pool www] child 12 said into stderr: \"PHP Fatal error:  Uncaught Error: Class \"Redis\" not found in /srv/app/index.php:3\"\nNOTICE: done\n",
			"[29-Nov-2026 08:00:00] WARNING: [pool www] child 12 said into stderr: \"PHP Fatal error:  Uncaught Error: Class \"Redis\" not found in /srv/app/index.php:3\""},
		{"PHP Warning:  first in /a.php on line 1\nPHP Parse error:  syntax error in /b.php on line 2\n", "PHP Parse error:  syntax error in /b.php on line 2"},
	} {
		if got := lastPHPError(c.logs); got != c.want {
			t.Errorf("lastPHPError(%q) = %q, want %q", c.logs, got, c.want)
		}
	}
}
