package wordpress

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

func TestNoCronPrepend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		chain   []string
		want    []string
		refused string
	}{
		{"alone", nil, []string{"if (!defined('DISABLE_WP_CRON')) { define('DISABLE_WP_CRON', true); }"}, ""},
		{"the site's own prepend chained", []string{"/var/www/site/wordfence-waf.php", ""}, []string{"require '/var/www/site/wordfence-waf.php';"}, ""},
		{"quotes in a path", []string{`/srv/it's\here.php`}, []string{`require '/srv/it\'s\\here.php';`}, ""},
		{"relative", []string{"waf.php"}, nil, "not an absolute path"},
		{"a newline", []string{"/srv/a.php\n?><?php system('id');"}, nil, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := NoCronPrepend(tc.chain...)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err %v, want %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
		})
	}
	// The pool line is one php-fpm.conf carries, quoted.
	p := phpfpm.Paths{Conf: "/lab/php-fpm.conf", PidFile: "/lab/p.pid", Log: "/lab/l.log", Listen: "/lab/s.sock",
		ExtraPool: []string{NoCronPoolLine("/lab/php/wp-nocron.php")}}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestNoCronPrependStopsWPCron runs Debian's php-fpm with the prepend on
// a pool, in front of a docroot whose wp-config.php sets DISABLE_WP_CRON
// to false and whose pool had its own auto_prepend_file: Debian's
// WordPress (wp-includes/cron.php, _wp_cron) spawns no cron — it returns
// before looking for jobs — the constant stays true, and the site's own
// prepend still ran.
func TestNoCronPrependStopsWPCron(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	fpm, err := exec.LookPath("php-fpm8.2")
	if err != nil {
		t.Skip("php-fpm8.2 is not installed")
	}
	const cron = "/usr/share/wordpress/wp-includes/cron.php"
	if _, err := os.Stat(cron); err != nil {
		t.Skip("Debian's wordpress package is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (the pool runs as nobody)")
	}
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sitePrepend := write("site-prepend.php", "<?php define('SITE_PREPEND', 1);\n")
	text, err := NoCronPrepend(sitePrepend)
	if err != nil {
		t.Fatal(err)
	}
	prepend := write("wp-nocron.php", text)
	write("wp-config.php", "<?php define('DISABLE_WP_CRON', false);\n")
	index := write("index.php", `<?php require __DIR__ . '/wp-config.php'; require '`+cron+`';
echo json_encode(['site_prepend' => defined('SITE_PREPEND'), 'disabled' => DISABLE_WP_CRON, 'spawned' => _wp_cron()]);`)
	sock := filepath.Join(dir, "fpm.sock")
	write("fpm.conf", "[global]\npid = "+dir+"/fpm.pid\nerror_log = "+dir+"/fpm.log\ndaemonize = no\n[t]\nuser = nobody\ngroup = nogroup\nlisten = "+sock+
		"\nlisten.mode = 0666\npm = static\npm.max_children = 1\n"+NoCronPoolLine(prepend)+"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fpm, "--nodaemonize", "--fpm-config", filepath.Join(dir, "fpm.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	params := map[string]string{"SCRIPT_FILENAME": index, "REQUEST_METHOD": "GET", "REQUEST_URI": "/", "SERVER_PROTOCOL": "HTTP/1.1"}
	var resp *fcgi.Response
	for {
		resp, err = fcgi.Get(ctx, "unix", sock, params, nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		logs, _ := os.ReadFile(filepath.Join(dir, "fpm.log"))
		t.Fatalf("%v\n%s", err, logs)
	}
	var got struct {
		SitePrepend bool `json:"site_prepend"`
		Disabled    bool `json:"disabled"`
		Spawned     any  `json:"spawned"`
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("status %d body %q stderr %q", resp.Status, resp.Body, resp.Stderr)
	}
	if !got.SitePrepend || !got.Disabled || got.Spawned != float64(0) {
		t.Errorf("got %+v, want the site's prepend run, DISABLE_WP_CRON true and no cron spawned", got)
	}
}
