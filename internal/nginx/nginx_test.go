package nginx

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

func TestRender(t *testing.T) {
	site := Site{Prefix: "/lab/", PidFile: "/lab/run/nginx.pid", ErrorLog: "/lab/log/e.log", AccessLog: "/lab/log/a.log",
		TempDir: "/lab/tmp", Listen: "127.0.0.1:8080", DocRoot: "/lab/www", FastCGI: "unix:/lab/run/php-fpm.sock",
		FrontController: "/index.php", FPMStatusPath: "/fpm-status", StubStatusPath: "/nginx-status"}
	def := Render(knob.Defaults(), site)
	for _, w := range []string{"worker_processes auto;", "worker_connections 768;", "access_log /lab/log/a.log;",
		"listen 127.0.0.1:8080 backlog=511;", "fastcgi_pass unix:/lab/run/php-fpm.sock;", "fastcgi_param HTTP_HOST $host:$server_port;",
		"try_files $uri $uri/ /index.php?$args;", "fastcgi_param SCRIPT_FILENAME /fpm-status;", "client_body_temp_path /lab/tmp/client_body;",
		"location = /nginx-status { stub_status; allow 127.0.0.1; deny all; }", "daemon off;"} {
		if !strings.Contains(def, w) {
			t.Errorf("default config lacks %q", w)
		}
	}
	if strings.Count(def, "fastcgi_param SCRIPT_NAME") != 2 {
		t.Errorf("each FastCGI location must send SCRIPT_NAME exactly once:\n%s", def)
	}
	cfg, _ := knob.Defaults().Apply([]string{"nginx.worker_processes=4", "nginx.access_log=off", "nginx.listen_backlog=4096", "nginx.keepalive_timeout=0"})
	tuned := Render(cfg, site)
	for _, w := range []string{"worker_processes 4;", "access_log off;", "backlog=4096;", "keepalive_timeout 0;"} {
		if !strings.Contains(tuned, w) {
			t.Errorf("tuned config lacks %q", w)
		}
	}
}
