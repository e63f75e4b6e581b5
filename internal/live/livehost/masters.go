package livehost

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
)

// findMasters is what Masters and NginxMasters share: the processes whose
// title starts with title, run from a binary whose name starts with binary
// by root or this process's user (processAccount), each made into an M by
// parse (false: no master after all; conf is the configuration it runs).
// A worker just forked keeps its master's title until it names itself: a
// candidate whose parent is a master of the same configuration is that
// child, and is left out.
func findMasters[M any](fs *proc.FS, title, binary string, parse func(pid int, cmdline string, v verified) (m M, conf string, ok bool)) ([]M, error) {
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	type candidate struct {
		m              M
		conf           string
		pid, parentPID int
	}
	var found []candidate
	for _, pid := range pids {
		cmdline, err := fs.ReadCmdline(pid)
		if err != nil || !strings.HasPrefix(cmdline, title) {
			continue
		}
		v, err := processAccount(fs, pid, []string{binary}, rootOrMe)
		if err != nil {
			continue
		}
		m, conf, ok := parse(pid, cmdline, v)
		if !ok {
			continue
		}
		ppid := 0
		if st, err := fs.ReadStat(pid); err == nil {
			ppid = st.PPID
		}
		found = append(found, candidate{m, conf, pid, ppid})
	}
	byPID := map[int]string{}
	for _, c := range found {
		byPID[c.pid] = c.conf
	}
	var out []M
	for _, c := range found {
		if conf, ok := byPID[c.parentPID]; ok && conf == c.conf {
			continue
		}
		out = append(out, c.m)
	}
	return out, nil
}

// oneMaster returns the one pid of pids, the running masters of server's
// configuration conf, or says why there is not one; two is what
// two masters of one configuration may mean.
func oneMaster(server, conf string, pids []int, two string) (int, error) {
	switch len(pids) {
	case 0:
		return 0, fmt.Errorf("%s's master of %s is not running", server, conf)
	case 1:
		return pids[0], nil
	}
	return 0, fmt.Errorf("%d %s masters of %s are running (%v): %s, or a second master", len(pids), server, conf, pids, two)
}
