package livehost

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sockq"
)

// MariaDBServer is a running MariaDB server found in /proc: mariadbd (or
// mysqld) owned by root, by the mysql account or by this process's user.
type MariaDBServer struct {
	PID int
	UID int
	// Args are its command line, argv[0] first.
	Args []string
	// DefaultsFile and ExtraFile are its --defaults-file and
	// --defaults-extra-file ("" when not given).
	DefaultsFile, ExtraFile string
	// Socket is its unix socket: --socket on its command line, else the
	// last socket of its option files, else Debian's default.
	Socket string
	// SocketFrom says where Socket was found (for messages).
	SocketFrom string
	// Conf is its configuration as read from disk (nil when unreadable:
	// ConfError says why).
	Conf      *Cnf
	ConfError string
}

// DefaultMariaDBSocket is Debian's compiled-in socket.
const DefaultMariaDBSocket = "/run/mysqld/mysqld.sock"

// MariaDBServers lists the MariaDB servers running on this machine: a
// process whose argv[0] is mariadbd or mysqld (by its base name), owned by
// root, the mysql account or this process's user (a process of any other
// account could name itself so: it is left out). root is the host's root
// for its configuration files.
func MariaDBServers(fs *proc.FS, root string) ([]MariaDBServer, error) {
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	owners := map[int]bool{0: true, os.Geteuid(): true}
	if u, err := user.Lookup("mysql"); err == nil {
		if id, err := strconv.Atoi(u.Uid); err == nil {
			owners[id] = true
		}
	}
	// The kernel's table of listening unix sockets, to attribute each
	// server its socket (nil when netlink is not available: the option
	// files are then all there is).
	listeners, _ := sockq.Unix()
	var out []MariaDBServer
	for _, pid := range pids {
		dir := filepath.Join(fs.Root(), strconv.Itoa(pid))
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if base := filepath.Base(args[0]); base != "mariadbd" && base != "mysqld" {
			continue
		}
		v, err := processAccount(fs, pid, []string{"mariadbd", "mysqld"}, func(uid int) bool { return owners[uid] })
		if err != nil {
			continue
		}
		s := describeMariaDB(pid, v.uid, args, root)
		s.attributeSocket(listeningUnixPaths(fs, pid, listeners))
		out = append(out, s)
	}
	return out, nil
}

// describeMariaDB reads a server's command line and option files for
// its socket.
func describeMariaDB(pid, uid int, args []string, root string) MariaDBServer {
	s := MariaDBServer{PID: pid, UID: uid, Args: args}
	opts := ParseMariaDBArgs(args[1:])
	s.DefaultsFile, s.ExtraFile = opts["defaults_file"], opts["defaults_extra_file"]
	var files []string
	if s.DefaultsFile != "" {
		files = []string{s.DefaultsFile}
	} else {
		files = DefaultCnfFiles(root)
	}
	if s.ExtraFile != "" {
		files = append(files, s.ExtraFile)
	}
	if opts["no_defaults"] == "" {
		cnf, err := ReadCnf(root, files...)
		if err != nil {
			s.ConfError = err.Error()
		} else {
			s.Conf = cnf
		}
	}
	switch {
	case opts["socket"] != "":
		s.Socket, s.SocketFrom = opts["socket"], "its command line"
	case s.Conf != nil:
		if v, ok := s.Conf.Get("socket", ServerGroups("")...); ok && v != "" {
			s.Socket, s.SocketFrom = v, "its option files"
		}
	}
	if s.Socket == "" {
		s.Socket, s.SocketFrom = filepath.Join(root, DefaultMariaDBSocket), "Debian's default"
	}
	return s
}

// attributeSocket corrects the socket read from the server's command line
// and option files with the ones it really listens on (paths from the
// kernel): a system server started without --defaults-file reads the
// same /etc/mysql/my.cnf phptune reads under --root only when root is
// "/", so its files name another server's socket.
func (s *MariaDBServer) attributeSocket(listening []string) {
	if len(listening) == 0 {
		return
	}
	for _, p := range listening {
		if p == s.Socket {
			return
		}
	}
	s.Socket, s.SocketFrom = listening[0], "the socket it listens on (the kernel's table)"
}

// DefaultCnfFiles are the option files mariadbd reads without
// --defaults-file, under root: /etc/my.cnf and /etc/mysql/my.cnf (the
// server account's ~/.my.cnf is not read by phptune).
func DefaultCnfFiles(root string) []string {
	return []string{filepath.Join(root, "etc", "my.cnf"), filepath.Join(root, "etc", "mysql", "my.cnf")}
}

// ParseMariaDBArgs reads the long options of a server's command line
// (--name=value, or --name value for the few that take a path) into a
// map by name with dashes as underscores; a flag without a value maps to
// "1". The last occurrence wins, as for the server.
func ParseMariaDBArgs(args []string) map[string]string {
	out := map[string]string{}
	takesValue := map[string]bool{"socket": true, "defaults_file": true, "defaults_extra_file": true, "datadir": true, "user": true, "pid_file": true}
	for i := 0; i < len(args); i++ {
		a, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		name = strings.ReplaceAll(name, "-", "_")
		if name == "" {
			continue
		}
		switch {
		case hasValue:
		case takesValue[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			value = args[i+1]
			i++
		default:
			value = "1"
		}
		out[name] = value
	}
	return out
}

// MariaDBUnder keeps the servers of the host at root: every server on
// the host itself ("/"); on a copy, only a server whose socket is in the
// copy (started from its files) or is socket.
func MariaDBUnder(servers []MariaDBServer, root, socket string) []MariaDBServer {
	if root == "/" {
		return servers
	}
	var mine []MariaDBServer
	for _, s := range servers {
		if strings.HasPrefix(s.Socket, root+"/") || s.Socket == socket {
			mine = append(mine, s)
		}
	}
	return mine
}

// PickMariaDB chooses the server advise and apply work on: the one whose
// socket is socket when given, else the only one running.
func PickMariaDB(servers []MariaDBServer, socket string) (MariaDBServer, error) {
	if socket != "" {
		for _, s := range servers {
			if s.Socket == socket {
				return s, nil
			}
		}
		if len(servers) == 1 {
			// The flag names the socket the configuration did not.
			s := servers[0]
			s.Socket, s.SocketFrom = socket, "--mariadb-socket"
			return s, nil
		}
	}
	switch len(servers) {
	case 0:
		return MariaDBServer{}, fmt.Errorf("no MariaDB server (mariadbd) is running here")
	case 1:
		return servers[0], nil
	}
	var socks []string
	for _, s := range servers {
		socks = append(socks, fmt.Sprintf("%s (pid %d)", s.Socket, s.PID))
	}
	return MariaDBServer{}, fmt.Errorf("%d MariaDB servers are running (%s): name one with --mariadb-socket", len(servers), strings.Join(socks, ", "))
}
