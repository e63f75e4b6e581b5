package load

import (
	"bytes"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadScenarioFile reads the scenario file at path and parses it
// (ParseScenario). An error reading the file is the file system's
// (*fs.PathError); any other error is ParseScenario's refusal of its
// content.
func ReadScenarioFile(path string) ([]Request, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScenario(bytes.NewReader(data))
}

// ReadBodyFile is the request body kept in the file at path, sent as it
// is.
func ReadBodyFile(path string) ([]byte, error) {
	return os.ReadFile(path)
}

// StartCPUProfile writes a Go CPU profile of this process (the generator)
// to the file at path until stop is called. The file is opened without
// following a link and, when it exists, must be a regular file of this
// process's account before it is emptied: root never writes through a
// name another account planted (a link in /tmp to a file of root's).
func StartCPUProfile(path string) (stop func(), err error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of uid %d (owner %d): name a new file or one of your own", path, os.Geteuid(), st.Uid)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// SplitSocket separates "/run/php/fpm.sock/var/www/index.php" into the
// socket and the script: the socket is the longest existing prefix that is
// a socket, or failing that, the prefix ending in ".sock".
func SplitSocket(p string) (socket, script string, err error) {
	parts := strings.Split(p, "/")
	for i := len(parts) - 1; i > 1; i-- {
		cand := strings.Join(parts[:i], "/")
		if st, err := os.Stat(cand); err == nil && st.Mode()&os.ModeSocket != 0 {
			return cand, "/" + strings.Join(parts[i:], "/"), nil
		}
	}
	for i := 2; i < len(parts); i++ {
		if strings.HasSuffix(parts[i-1], ".sock") {
			return strings.Join(parts[:i], "/"), "/" + strings.Join(parts[i:], "/"), nil
		}
	}
	return "", "", fmt.Errorf("cannot tell the socket from the script in %q: no prefix is an existing socket (is php-fpm running?)", p)
}
