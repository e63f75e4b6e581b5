package labprofile

import (
	"sync"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/perf"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/profile"
)

// roleOfComponent maps a lab process's component to its profile role.
func roleOfComponent(l *lab.Lab, component string) string {
	switch component {
	case "php-fpm", "unit":
		return profile.RolePHP
	case "apache":
		if l.Config.Server() == knob.ApachePreforkModPHP {
			return profile.RolePHP // PHP runs in Apache's children
		}
		return profile.RoleWeb
	case "mariadb":
		return profile.RoleMariaDB
	case "nginx", "lighttpd", "caddy", "h2o":
		return profile.RoleWeb
	}
	return ""
}

// scanner follows the lab's processes while perf samples every CPU: the
// verified leaders the lab recorded and every descendant, by parent pid,
// each with its role, and the files each maps executable (what perf
// script may read, once verified). Workers come and go (pm dynamic), so
// it scans every interval until stopped.
type scanner struct {
	lab   *lab.Lab
	fs    *proc.FS
	mu    sync.Mutex
	roles map[int]string
	files map[string]bool
	stop  chan struct{}
	done  chan struct{}
}

func newScanner(l *lab.Lab, fs *proc.FS) *scanner {
	return &scanner{lab: l, fs: fs, roles: map[int]string{}, files: map[string]bool{}}
}

// start scans now and every interval until stopAndWait.
func (s *scanner) start(interval time.Duration) {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.scan()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				s.scan()
				return
			case <-t.C:
				s.scan()
			}
		}
	}()
}

func (s *scanner) stopAndWait() {
	close(s.stop)
	<-s.done
}

func (s *scanner) scan() {
	roots := map[int]string{}
	for _, p := range s.lab.LiveProcesses() {
		if r := roleOfComponent(s.lab, p.Component); r != "" {
			roots[p.PID] = r
		}
	}
	pids, err := s.fs.PIDs()
	if err != nil {
		return
	}
	parent := map[int]int{}
	for _, pid := range pids {
		if st, err := s.fs.ReadStat(pid); err == nil {
			parent[pid] = st.PPID
		}
	}
	found := map[int]string{}
	for _, pid := range pids {
		// Up the parent chain to a leader, at most 64 steps.
		p := pid
		for i := 0; i < 64 && p > 1; i++ {
			if r, ok := roots[p]; ok {
				found[pid] = r
				break
			}
			p = parent[p]
		}
	}
	var files []string
	for pid := range found {
		if fs, err := perf.MappedFiles(s.fs.Root(), pid); err == nil {
			files = append(files, fs...)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, r := range found {
		s.roles[pid] = r
	}
	for _, f := range files {
		s.files[f] = true
	}
}

// role is the role of pid as last seen, "" for a process not the lab's.
func (s *scanner) role(pid int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roles[pid]
}

// mapped lists the files the lab's processes mapped executable.
func (s *scanner) mapped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.files))
	for f := range s.files {
		out = append(out, f)
	}
	return out
}

// pids lists the processes seen with role.
func (s *scanner) pids(role string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for pid, r := range s.roles {
		if r == role {
			out = append(out, pid)
		}
	}
	return out
}
