package livehost

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
)

// NginxSpec names the nginx of a host that advise, apply and rollback
// read: Config is --nginx-config (default: ROOT/etc/nginx/nginx.conf),
// Prefix --nginx-prefix (default: the master's -p).
type NginxSpec struct {
	Root, Config, Prefix string
}

// LiveNginx is a host's nginx: how to check and reload it, and its
// configuration as nginx -T dumped it.
type LiveNginx struct {
	Nginx Nginx
	Conf  *NginxConf
}

// FindNginx finds the running nginx master spec names: the one of
// spec.Config, else the one of ROOT/etc/nginx/nginx.conf (a master
// started without -c reads /etc/nginx/nginx.conf), trusted by
// NginxMasters' rule. Two masters of one configuration are refused, not
// guessed between. systemd reloads it only when it is the main process
// of the service its cgroup names (MainService). nil without error when
// no such nginx runs and none was named; a Config no master runs is an
// *InputError.
func FindNginx(ctx context.Context, spec NginxSpec) (*Nginx, error) {
	fs, err := proc.Default()
	if err != nil {
		return nil, err
	}
	masters, err := NginxMasters(fs)
	if err != nil {
		return nil, err
	}
	m, err := pickNginx(masters, spec)
	if err != nil || m == nil {
		return nil, err
	}
	// The binary the verified master runs (its exe link, checked by
	// NginxMasters), else nginx from PATH.
	bin := m.Exe
	if !filepath.IsAbs(bin) || strings.HasSuffix(bin, " (deleted)") {
		if bin, err = exec.LookPath("nginx"); err != nil {
			bin = "/usr/sbin/nginx"
		}
	}
	ng := &Nginx{Binary: bin, Conf: m.Conf, Prefix: spec.Prefix}
	if ng.Prefix == "" {
		ng.Prefix = m.Prefix
	}
	if spec.Root != "/" {
		// A copy's check must not open the host's own error log.
		ng.ErrorLog = filepath.Join(spec.Root, "var", "log", "nginx", "error.log")
	} else {
		ng.Systemd = MainService(ctx, spec.Root, m.PID)
	}
	return ng, nil
}

// pickNginx is the one master of masters spec names (see FindNginx).
func pickNginx(masters []NginxMaster, spec NginxSpec) (*NginxMaster, error) {
	want := spec.Config
	if want == "" {
		want = filepath.Join(spec.Root, NginxDefaultConf)
	}
	var m *NginxMaster
	for i := range masters {
		if masters[i].Conf != want {
			continue
		}
		if m != nil {
			return nil, fmt.Errorf("two nginx masters run with %s (pids %d and %d): stop the one that should not run, then run phptune again", want, m.PID, masters[i].PID)
		}
		m = &masters[i]
	}
	if m != nil || spec.Config == "" {
		return m, nil
	}
	confs := []string{}
	for _, x := range masters {
		confs = append(confs, x.Conf)
	}
	if len(confs) == 0 {
		confs = append(confs, "none")
	}
	return nil, inputErr("Running nginx masters: "+strings.Join(confs, ", "), "--nginx-config %s: no running nginx master (owned by root) was started with it", spec.Config)
}

// OpenNginx finds the running nginx master spec names (FindNginx) and
// reads its configuration through nginx -T. nil without error when no
// such nginx runs and none was named.
func OpenNginx(ctx context.Context, spec NginxSpec) (*LiveNginx, error) {
	ng, err := FindNginx(ctx, spec)
	if err != nil || ng == nil {
		return nil, err
	}
	conf, err := ng.Dump(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading nginx's configuration: %w", err)
	}
	return &LiveNginx{Nginx: *ng, Conf: conf}, nil
}

// VerifyDump checks that nginx -T's dump is the files on disk: every
// file reached by an include, every file's text as dumped. A file whose
// text holds a "# configuration file" line of its own would otherwise
// hide directives from the dump's reader.
func (c *NginxConf) VerifyDump() error {
	if len(c.Unreached) > 0 {
		return fmt.Errorf("nginx -T shows files no include names (%s): a configuration file holds a forged \"# configuration file\" line; apply does not trust this dump", strings.Join(c.Unreached, ", "))
	}
	for _, path := range c.Files {
		_, b, err := ReadRealConf(path)
		if err != nil {
			return fmt.Errorf("nginx's %s: %v", path, err)
		}
		if string(b) != string(c.Text[path]) {
			return fmt.Errorf("nginx's %s is not as nginx -T printed it (changed since, or its text holds a \"# configuration file\" line): apply does not trust this dump", path)
		}
	}
	return nil
}
