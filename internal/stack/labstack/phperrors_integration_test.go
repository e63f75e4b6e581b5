package labstack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
)

// phpErrorsPage raises two user deprecations in index.php and one
// warning in lib/warn.php per request. utf8_encode() is deprecated in
// PHP 8.2 (E_DEPRECATED), which the distro's php.ini leaves out of
// error_reporting: it must not be counted.
var phpErrorsPage = map[string]string{
	"index.php": `<?php
require __DIR__ . '/lib/warn.php';
trigger_error('phptune test deprecation', E_USER_DEPRECATED);
trigger_error('phptune test deprecation', E_USER_DEPRECATED);
utf8_encode('x');
warn_once();
echo 'ok';
`,
	"lib/warn.php": `<?php
function warn_once() { trigger_error('phptune test warning', E_USER_WARNING); }
`,
}

// TestPHPErrorsCounted runs a page that logs PHP messages behind nginx,
// Apache (proxy_fcgi and mod_php) and lighttpd: the run's record counts
// them by class and by file under the docroot, once each (php-fpm's log
// repeats them and is read only for lighttpd, whose log phptune does not
// read), in step with the requests the generator counted.
func TestPHPErrorsCounted(t *testing.T) {
	labtest.Home(t)
	dir, err := os.MkdirTemp(labtest.TempParent(), "phptune-phperr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range phpErrorsPage {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, server := range []string{"nginx-fpm", "apache-event-fpm", "apache-prefork-modphp", "lighttpd-fpm"} {
		t.Run(server, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			name := "phperr-" + strings.ReplaceAll(server, "-", "")
			l, err := lab.Up(ctx, lab.Options{Name: name, DocRoot: dir, Set: []string{"server=" + server}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := lab.Down(name); err != nil {
					t.Error(err)
				}
			}()
			w, err := workload.Parse(ctx, l, "front")
			if err != nil {
				t.Fatal(err)
			}
			const conns = 2
			b, err := New(l, w).Measure(ctx, conns, time.Second, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			ok := b.StatusCodes["200"]
			if ok == 0 || b.Errors != 0 || b.ServerErrors == nil || b.ServerErrors.PHP == nil {
				t.Fatalf("%d answered 200, %d errors, server errors %+v", ok, b.Errors, b.ServerErrors)
			}
			byClass := map[string]results.PHPErrorClass{}
			for _, c := range b.ServerErrors.PHP.Classes {
				byClass[c.Class] = c
			}
			// The logs are marked as the warm-up ends and the generator
			// starts counting a moment apart, and read as the load ends:
			// the requests of that moment and those in flight at either
			// edge may be counted on one side only (a few thousand a
			// second here: allow the connections' worth or 1%, as
			// TestServerErrorsExplainBacklog does).
			check := func(class, file, example string, perRequest int64) {
				t.Helper()
				c, found := byClass[class]
				if !found || len(c.Files) != 1 || c.OtherFiles != 0 {
					t.Errorf("%s: %+v, want one file", class, c)
					return
				}
				f := c.Files[0]
				want, slack := perRequest*ok, perRequest*max(conns+1, ok/100)
				if f.File != file || f.Example != example || f.Count != c.Count || f.Count < want-slack || f.Count > want+slack {
					t.Errorf("%s: %+v, want %s counted %d±%d with example %q", class, c, file, want, slack, example)
				}
			}
			check("warning", "lib/warn.php", "phptune test warning", 1)
			classes := 1
			if server != "apache-prefork-modphp" {
				// mod_php logs a deprecation at Apache's level info,
				// which Apache's LogLevel warn leaves out.
				check("deprecation", "index.php", "phptune test deprecation", 2)
				classes++
			}
			if len(byClass) != classes {
				t.Errorf("classes %+v, want %d (warning, deprecation)", b.ServerErrors.PHP.Classes, classes)
			}
			t.Logf("%d requests answered 200; %+v", ok, b.ServerErrors.PHP.Classes)
		})
	}
}
