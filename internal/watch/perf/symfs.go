package perf

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Symfs is the directory `perf script --symfs` reads binaries through: a
// link, at each binary's own path below it, to every mapped file that
// root alone could have written (the file and every directory above it
// owned by root, no link on the way, writable by nobody else). A library
// the profiled lab could have written — or planted, or swapped — gets no
// link: perf leaves its frames unnamed rather than parse it as root.
type Symfs struct {
	Dir     string
	linked  map[string]bool
	Refused map[string]string // path -> why it got no link
}

// NewSymfs makes the link directory inside dir (private to root).
func NewSymfs(dir string) (*Symfs, error) {
	d := filepath.Join(dir, "symfs")
	if err := os.Mkdir(d, 0o700); err != nil {
		return nil, err
	}
	return &Symfs{Dir: d, linked: map[string]bool{}, Refused: map[string]string{}}, nil
}

// Add links path (a mapped file's absolute path) when only root could
// have written it.
func (s *Symfs) Add(path string) {
	if s.linked[path] || s.Refused[path] != "" {
		return
	}
	if err := RootOnly(path); err != nil {
		s.Refused[path] = err.Error()
		return
	}
	link := filepath.Join(s.Dir, path)
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		s.Refused[path] = err.Error()
		return
	}
	if err := os.Symlink(path, link); err != nil {
		s.Refused[path] = err.Error()
		return
	}
	s.linked[path] = true
	// Its debug symbols (Debian's -dbg and -dbgsym packages), which perf
	// finds by build id below the symfs.
	if dbg := debugFile(path); dbg != "" && RootOnly(dbg) == nil {
		link := filepath.Join(s.Dir, dbg)
		if os.MkdirAll(filepath.Dir(link), 0o700) == nil {
			_ = os.Symlink(dbg, link)
		}
	}
}

// debugFile is the path of path's separate debug symbols by its build id
// (/usr/lib/debug/.build-id/NN/REST.debug), "" without a build id. path
// is verified root's: reading its ELF notes as root is safe.
func debugFile(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b := make([]byte, min(p.Filesz, 4096))
		if _, err := p.ReadAt(b, 0); err != nil && len(b) == 0 {
			continue
		}
		for len(b) >= 12 {
			nsz, dsz, typ := f.ByteOrder.Uint32(b), f.ByteOrder.Uint32(b[4:]), f.ByteOrder.Uint32(b[8:])
			nEnd := 12 + (int(nsz)+3)&^3
			dEnd := nEnd + (int(dsz)+3)&^3
			if nsz > 64 || dsz > 64 || dEnd > len(b) {
				break
			}
			if typ == 3 && string(b[12:12+nsz]) == "GNU\x00" && dsz > 1 { // NT_GNU_BUILD_ID
				id := hex.EncodeToString(b[nEnd : nEnd+int(dsz)])
				return filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
			}
			b = b[dEnd:]
		}
	}
	return ""
}

// RootOnly checks that path is a regular file that only root could have
// written or replaced: it and every directory above it owned by root,
// none a symlink, none writable by group or others (a sticky directory
// like /tmp is refused too: others may create in it).
func RootOnly(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%q is not a clean absolute path", path)
	}
	p := path
	for {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		kind := st.Mode & syscall.S_IFMT
		switch {
		case st.Uid != 0:
			return fmt.Errorf("%s belongs to uid %d, not root", p, st.Uid)
		case st.Mode&0o022 != 0:
			return fmt.Errorf("%s is writable by group or others (mode %o)", p, st.Mode&0o7777)
		case p == path && kind != syscall.S_IFREG:
			return fmt.Errorf("%s is not a regular file", p)
		case p != path && kind != syscall.S_IFDIR:
			return fmt.Errorf("%s is not a directory", p)
		}
		if p == "/" {
			return nil
		}
		p = filepath.Dir(p)
	}
}

// MappedFiles lists the files a process has mapped executable, from
// /proc/PID/maps (the kernel's text: the paths are the files' own, with
// newlines escaped, " (deleted)" after a file gone).
func MappedFiles(procRoot string, pid int) ([]string, error) {
	f, err := os.Open(filepath.Join(procRoot, fmt.Sprint(pid), "maps"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		// address perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.Contains(fields[1], "x") || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		p := strings.Join(fields[5:], " ")
		if strings.HasSuffix(p, " (deleted)") || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		return out, err
	}
	return out, nil
}
