package livehost

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
)

// CacheServer is a running Redis or Memcached server found in /proc:
// redis-server or memcached run by root, by Debian's account of its
// package (redis, memcache) or by this process's user, whose binary
// passes phptune's trust rule (processAccount).
type CacheServer struct {
	// Kind is "redis" or "memcached".
	Kind string
	PID  int
	UID  int
	// Args are its command line as /proc/PID/cmdline shows it, argv[0]
	// first. Redis rewrites its own (proc-title-template): Debian's
	// shows "/usr/bin/redis-server 127.0.0.1:6379" as one argument.
	Args []string
}

// cacheBinaryNames are the names a cache server's binary starts with
// (Debian's /usr/bin/redis-server is a link to redis-check-rdb, which
// /proc/PID/exe shows).
var cacheBinaryNames = map[string][]string{
	"redis":     {"redis-server", "redis-check-rdb"},
	"memcached": {"memcached"},
}

// cacheAccounts are the accounts Debian's packages run the servers as.
var cacheAccounts = map[string]string{"redis": "redis", "memcached": "memcache"}

// CacheServers lists the Redis and Memcached servers running on this
// machine: a process whose command line starts with redis-server or
// memcached (its first word's base name), run by root, by the package's
// account or by this process's user, running the package's binary. A
// process of another account could call itself so: it is left out.
func CacheServers(fs *proc.FS) ([]CacheServer, error) {
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	owners := map[string]map[int]bool{}
	for kind, name := range cacheAccounts {
		owners[kind] = map[int]bool{0: true, os.Geteuid(): true}
		if u, err := user.Lookup(name); err == nil {
			if id, err := strconv.Atoi(u.Uid); err == nil {
				owners[kind][id] = true
			}
		}
	}
	var out []CacheServer
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join(fs.Root(), strconv.Itoa(pid), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		kind := cacheKindOf(args[0])
		if kind == "" {
			continue
		}
		v, err := processAccount(fs, pid, cacheBinaryNames[kind], func(uid int) bool { return owners[kind][uid] })
		if err != nil {
			continue
		}
		out = append(out, CacheServer{Kind: kind, PID: pid, UID: v.uid, Args: args})
	}
	return out, nil
}

// cacheKindOf is the kind of cache server argv0 names ("" for none): its
// first word's base name (Redis's rewritten title holds spaces).
func cacheKindOf(argv0 string) string {
	first, _, _ := strings.Cut(argv0, " ")
	switch filepath.Base(first) {
	case "redis-server":
		return "redis"
	case "memcached":
		return "memcached"
	}
	return ""
}
