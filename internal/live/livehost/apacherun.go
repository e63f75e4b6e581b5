package livehost

import (
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
)

// ApacheMasters lists the pids of the Apache servers running here: a
// process whose first word is apache2 or httpd (by its base name) that
// passes the trust rule every server found in /proc passes
// (processAccount): run by root or by this process's user with every uid
// alike, in this mount namespace, from a binary named apache2 or httpd
// only root can write. The owner of /proc/PID alone is not enough: a
// set-uid program shows uid 0 there, and any process can take the title.
// Apache's workers (www-data) are left out by the same rule.
func ApacheMasters(fs *proc.FS) ([]int, error) {
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range pids {
		cmd, err := fs.ReadCmdline(pid)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(cmd, " ")
		if b := filepath.Base(first); b != "apache2" && b != "httpd" {
			continue
		}
		if _, err := processAccount(fs, pid, []string{"apache2", "httpd"}, rootOrMe); err != nil {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// ApacheRuns says whether a trusted Apache (see ApacheMasters) runs here.
func ApacheRuns() bool {
	fs, err := proc.Default()
	if err != nil {
		return false
	}
	ms, err := ApacheMasters(fs)
	return err == nil && len(ms) > 0
}
