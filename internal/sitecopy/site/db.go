package site

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
)

// findDB says where the application's connection goes (its endpoint)
// and which running MariaDB server answers there: the kernel's table of
// listening sockets ties the address to a server's process; failing
// that, a server whose socket (command line, option files) is that path.
// The database's size is read from its directory in the server's data
// directory: no connection, no query.
func findDB(h Host, db Database, defaultSocket string) *DBTarget {
	t := &DBTarget{Endpoint: db.Endpoint(defaultSocket)}
	if t.Endpoint.Network == "remote" && findRemoteDB(t) {
		return t
	}
	servers, err := livehost.MariaDBServers(h.FS, h.Root)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	var pids []int
	for _, s := range servers {
		pids = append(pids, s.PID)
	}
	var server *livehost.MariaDBServer
	if pid, ok := holder(h.FS, pids, t.Endpoint.String()); ok {
		for i := range servers {
			if servers[i].PID == pid {
				server, t.How = &servers[i], "the kernel: the server holds the listening socket"
			}
		}
	}
	if server == nil && t.Endpoint.Network == "unix" {
		for i := range servers {
			if servers[i].Socket == t.Endpoint.Address {
				server, t.How = &servers[i], "its socket, from "+servers[i].SocketFrom
			}
		}
	}
	if server == nil && t.Endpoint.Network == "unix" {
		// The same socket at another path: a bind of the server's socket
		// directory, or a link to its socket (a hosting panel's
		// /var/lib/mysql-panel/mysqld.sock); the kernel's table names the
		// path the server bound.
		if st, err := os.Stat(filepath.Join(h.Root, t.Endpoint.Address)); err == nil && st.Mode()&os.ModeSocket != 0 {
			for i := range servers {
				if s2, err := os.Stat(filepath.Join(h.Root, servers[i].Socket)); err == nil && os.SameFile(st, s2) {
					server, t.How = &servers[i], "its socket "+servers[i].Socket+" (the same file), from "+servers[i].SocketFrom
				}
			}
		}
	}
	if server == nil {
		switch {
		case listened(t.Endpoint.String()):
			t.Error = fmt.Sprintf("%s is held by a process that is not a MariaDB server owned by root or mysql: phptune does not trust it", t.Endpoint)
		case len(servers) == 0:
			t.Error = "no MariaDB server runs here"
		default:
			t.Error = fmt.Sprintf("no running MariaDB server listens on %s", t.Endpoint)
		}
		return t
	}
	t.ServerPID, t.Socket = server.PID, server.Socket
	t.DataDir = dataDir(*server)
	t.SizeBytes, t.Tables, t.SizeNote = dbSize(t.DataDir, db.Name)
	return t
}

// dataDir is a server's data directory: --datadir, else its option
// files', else Debian's /var/lib/mysql.
func dataDir(s livehost.MariaDBServer) string {
	if d := livehost.ParseMariaDBArgs(s.Args[1:])["datadir"]; d != "" {
		return filepath.Clean(d)
	}
	if s.Conf != nil {
		if d, ok := s.Conf.Get("datadir", livehost.ServerGroups("")...); ok && d != "" {
			return filepath.Clean(d)
		}
	}
	return "/var/lib/mysql"
}

var plainDBName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// dbSize sums the files of database name's directory in datadir (without
// following links) and counts its tables (.frm files).
func dbSize(datadir, name string) (int64, int, string) {
	if !plainDBName.MatchString(name) {
		return 0, 0, "size not read: the name needs MariaDB's file-name encoding"
	}
	dir := filepath.Join(datadir, name)
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return 0, 0, fmt.Sprintf("size not read: %s is not a directory (%v)", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, "size not read: " + err.Error()
	}
	var size int64
	tables := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasSuffix(e.Name(), ".frm") {
			tables++
		}
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
	}
	return size, tables, ""
}
