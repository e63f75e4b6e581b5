package lab

import (
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
)

// TestModPHPPoolLines: a mod_php site's carried php_value settings go to
// php-fpm's pool when the lab's server runs php-fpm (the event MPM a
// tune challenges mod_php with, whose Apache has no module to take them:
// apache2 -t refused its httpd.conf), and nowhere else under mod_php,
// whose httpd.conf keeps them.
func TestModPHPPoolLines(t *testing.T) {
	carried := &apache.Carried{Lines: []string{"RewriteEngine On", `php_value upload_max_filesize "32M"`, `php_admin_flag display_errors "off"`}}
	want := []string{"php_value[upload_max_filesize] = 32M", "php_admin_flag[display_errors] = off"}
	for _, c := range []struct {
		server string
		want   []string
	}{
		{knob.ApacheEventFPM, want},
		{knob.NginxFPM, want},
		{knob.ApachePreforkModPHP, nil},
	} {
		cfg := knob.Defaults()
		cfg[knob.ServerKnob] = c.server
		l := &Lab{Config: cfg, SiteApache: carried}
		if got := l.modPHPPoolLines(); !slices.Equal(got, c.want) {
			t.Errorf("server=%s: pool lines %q, want %q", c.server, got, c.want)
		}
	}
	if got := (&Lab{Config: knob.Defaults()}).modPHPPoolLines(); got != nil {
		t.Errorf("a lab that carries no Apache vhost: pool lines %q", got)
	}
}
