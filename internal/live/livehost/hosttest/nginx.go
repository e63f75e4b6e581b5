package hosttest

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NginxHost is Debian's nginx configuration copied into a Host's root
// and started, passing PHP to the copy's php-fpm pool.
type NginxHost struct {
	Conf     string // ROOT/etc/nginx/nginx.conf
	ConfDir  string // ROOT/etc/nginx/conf.d
	ErrorLog string // its -e
	Access   string // ROOT/var/log/nginx/access.log
	DocRoot  string // ROOT/var/www/html: index.html and index.php
	Port     int    // on 127.0.0.1
	Binary   string
}

// URL is the copy's address for path.
func (n *NginxHost) URL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(n.Port) + path
}

// Nginx copies /etc/nginx into h's root (every file's content, links
// resolved), moves its paths into the root (pid, logs, temporary
// directories, /etc/nginx), turns on the default site's PHP location
// with fastcgi_pass to h's socket, listens on a free loopback port, and
// starts its master as root (workers as www-data, as on Debian). It skips
// without nginx, and stops the master when the test ends.
func (h *Host) Nginx(t testing.TB) *NginxHost {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("no nginx:", err)
	}
	root := h.Root
	// www-data (nginx's workers, php-fpm's) must reach the document
	// root: the test's temporary directories are private by default.
	for d := filepath.Dir(root); d != os.TempDir() && d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	etc := filepath.Join(root, "etc", "nginx")
	n := &NginxHost{Conf: filepath.Join(etc, "nginx.conf"), ConfDir: filepath.Join(etc, "conf.d"), ErrorLog: filepath.Join(root, "var", "log", "nginx", "error.log"),
		Access: filepath.Join(root, "var", "log", "nginx", "access.log"), DocRoot: filepath.Join(root, "var", "www", "html"), Port: port, Binary: bin}
	for _, d := range []string{filepath.Join(root, "var", "log", "nginx"), n.DocRoot, filepath.Join(root, "var", "lib", "nginx")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	move := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), "/etc/nginx", etc)
		s = strings.ReplaceAll(s, "/var/log/nginx", filepath.Join(root, "var", "log", "nginx"))
		s = strings.ReplaceAll(s, "/run/nginx.pid", filepath.Join(root, "run", "nginx.pid"))
		s = strings.ReplaceAll(s, "/var/www/html", n.DocRoot)
		return []byte(s)
	}
	err = filepath.WalkDir("/etc/nginx", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(path, "/etc/nginx")
		dst := filepath.Join(etc, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if machinesOwn(rel) {
			// The machine's own sites listen where its nginx does
			// (:80, :443): the copy serves Debian's default site only.
			return nil
		}
		b, err := os.ReadFile(path) // a link's target's content
		if err != nil {
			return err
		}
		b = move(b)
		switch strings.TrimPrefix(path, "/etc/nginx/") {
		case "nginx.conf":
			temp := ""
			for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
				temp += fmt.Sprintf("\t%s_temp_path %s;\n", k, filepath.Join(root, "var", "lib", "nginx", k))
			}
			b = bytes.Replace(b, []byte("http {\n"), []byte("http {\n"+temp), 1)
		case "sites-enabled/default", "sites-available/default":
			s := string(b)
			s = strings.Replace(s, "listen 80 default_server;", "listen 127.0.0.1:"+strconv.Itoa(port)+" default_server;", 1)
			s = strings.Replace(s, "listen [::]:80 default_server;", "listen [::1]:"+strconv.Itoa(port)+" default_server;", 1)
			s = strings.Replace(s, "\t#location ~ \\.php$ {\n\t#\tinclude snippets/fastcgi-php.conf;", "\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;", 1)
			s = strings.Replace(s, "\t#\tfastcgi_pass unix:/run/php/php7.4-fpm.sock;", "\t\tfastcgi_pass unix:"+h.Socket+";", 1)
			s = strings.Replace(s, "\t#\tfastcgi_pass 127.0.0.1:9000;\n\t#}", "\t}", 1)
			s = strings.Replace(s, "index index.html", "index index.php index.html", 1)
			b = []byte(s)
		}
		h.Files.write(t, dst, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Debian's default site, enabled in the copy even when the machine
	// disabled it (a server with sites of its own often does).
	def, err := os.ReadFile(filepath.Join(etc, "sites-available", "default"))
	if err != nil {
		t.Skip("no Debian default site to copy:", err)
	}
	h.Files.write(t, filepath.Join(etc, "sites-enabled", "default"), def)
	h.Files.write(t, filepath.Join(n.DocRoot, "index.php"), []byte("<?php echo \"php ok\\n\";\n"))
	h.Files.write(t, filepath.Join(n.DocRoot, "index.html"), []byte("html ok\n"))
	h.nginx = n
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n
}

// machinesOwn says whether a file of /etc/nginx (its path below it) is
// the machine's own configuration rather than Debian's: every enabled
// site and every conf.d file (Debian ships conf.d empty and enables only
// its default site, which the copy enables from sites-available).
func machinesOwn(rel string) bool {
	rel = strings.TrimPrefix(rel, "/")
	return strings.HasPrefix(rel, "sites-enabled/") || strings.HasPrefix(rel, "conf.d/")
}

// Start starts the master (it daemonizes) and waits until it serves.
func (n *NginxHost) Start() error {
	cmd := exec.Command(n.Binary, "-c", n.Conf, "-e", n.ErrorLog)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("starting nginx: %v: %s", err, out)
	}
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(n.URL("/index.html"))
		if err == nil {
			resp.Body.Close()
			return nil
		}
		last = err
	}
	return fmt.Errorf("nginx did not serve within 10s: %v", last)
}

// Masters lists the pids of the copy's nginx masters, by title.
func (n *NginxHost) Masters() []int {
	var out []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		b, _ := os.ReadFile(c)
		s := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		if strings.HasPrefix(s, "nginx: master process ") && strings.Contains(s, " -c "+n.Conf+" ") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
			out = append(out, pid)
		}
	}
	return out
}

// Stop ends the copy's master and, with it, its workers.
func (n *NginxHost) Stop() {
	for _, pid := range n.Masters() {
		syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 250 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Get fetches path from the copy, on a connection of its own (a kept
// connection could reach a worker of the configuration before a reload):
// its status and body.
func (n *NginxHost) Get(path string) (int, string, error) {
	c := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(n.URL(path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}
