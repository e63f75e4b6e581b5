package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// nginxFlags say which nginx of the host advise, apply and rollback read.
type nginxFlags struct {
	config, prefix string
}

func (f *nginxFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "nginx-config", "", "nginx.conf of the running nginx master (default: its -c, or ROOT/etc/nginx/nginx.conf)")
	fl.StringVar(&f.prefix, "nginx-prefix", "", "nginx's -p prefix, when it runs with one (default: the master's)")
}

// spec is the nginx the flags name on the host rooted at root.
func (f *nginxFlags) spec(root string) livehost.NginxSpec {
	return livehost.NginxSpec{Root: root, Config: f.config, Prefix: f.prefix}
}

// printNginxPlan writes what apply does with nginx: the drop-in's step
// (printApplyPlan prints its diff), the patch and the notes.
func printNginxPlan(w io.Writer, p *livehost.ApplyPlan, root string) {
	if p.Nginx == nil {
		return
	}
	ng, ch := p.Nginx.Nginx, p.NginxChanges
	reload := "SIGHUP to nginx's master of " + ng.Conf + " (found in /proc, owned by root)"
	if ng.Systemd != "" {
		reload = "systemctl reload " + ng.Systemd
	}
	if ch.DropIn != nil {
		fmt.Fprintf(w, "nginx (%s): %s in %s; nginx -t -c %s; %s, new workers awaited\n", ng.Conf, strings.Join(ch.DropKnobs, " "), ch.DropInPath, ng.Conf, reload)
	}
	if ch.Patch != "" {
		fmt.Fprintf(w, "Not applied (%s): nginx takes these only in its main or events context or on a listen line, or your files already set them at http level; merge this patch yourself (cd %s && patch -p0), then nginx -t and reload:\n%s",
			strings.Join(ch.PatchKnobs, " "), root, ch.Patch)
	}
	for _, k := range ch.PatchKnobs {
		name, value, _ := strings.Cut(k, "=")
		if name != "nginx.listen_backlog" {
			continue
		}
		if n := sysctl.HostSomaxconn(); n >= 0 {
			if note := sysctl.CappedNote(name, value, n); note != "" {
				fmt.Fprintf(w, "Note: backlog=%s will be %s: raise it too (sysctl -w %s=%s, and a file in /etc/sysctl.d to keep it)\n", value, note, sysctl.Somaxconn, value)
			}
		}
	}
	for _, n := range ch.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// saveNginxPatch keeps the patch of ch beside transaction j, for patch
// -p0, and says where.
func saveNginxPatch(w io.Writer, ch *livehost.NginxChanges, opt liveapply.Options, j *liveapply.Journal, root string) {
	if ch == nil || ch.Patch == "" || j == nil {
		return
	}
	path, err := liveapply.SaveBeside(opt, j, "nginx.patch", []byte(ch.Patch))
	if err != nil {
		fmt.Fprintf(w, "The nginx patch could not be kept: %v\n", err)
		return
	}
	fmt.Fprintf(w, "nginx's patch, not applied, is in %s: cd %s && patch -p0 < %s; then nginx -t and reload nginx.\n", path, root, path)
}
