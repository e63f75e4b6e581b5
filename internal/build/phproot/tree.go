package phproot

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ensureRootDir makes dir (php-roots) a real directory of the user
// running phptune, mode 0755 (labs read the roots), refusing a link or a
// directory someone else owns.
func ensureRootDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || sys == nil || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s must be a real directory of uid %d: refused", dir, os.Geteuid())
	}
	if st.Mode().Perm() != 0o755 {
		return os.Chmod(dir, 0o755)
	}
	return nil
}

// lock takes dir/.lock, so that two runs never make or remove a root at
// once; a second run is refused at once rather than waiting.
func lock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, refuse("wait for it to end", "another phptune php add or remove is running (%s is locked)", f.Name())
	}
	return func() { f.Close() }, nil
}

// removeStale removes what killed runs left in dir (.work-* trees).
func removeStale(dir string, w io.Writer) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".work-") {
			p := filepath.Join(dir, e.Name())
			if err := removeTree(p); err != nil {
				progress(w, "could not remove %s, left by an interrupted run: %v", p, err)
			} else {
				progress(w, "removed %s, left by an interrupted run", p)
			}
		}
	}
}

// mountsUnder lists the mount points below dir (/proc/self/mountinfo's
// fifth field, octal escapes decoded), deepest first.
func mountsUnder(mountinfo io.Reader, dir string) []string {
	var out []string
	sc := bufio.NewScanner(mountinfo)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, dir+"/") || mp == dir {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMount decodes mountinfo's \ooo escapes (space, tab, newline, \).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeTree removes a root's tree after detaching anything still mounted
// in it (a killed mmdebstrap can leave its /proc, /sys or /dev bind
// mounts): removing through a mount would delete the host's files. A
// mount that stays is an error and nothing is removed.
func removeTree(dir string) error {
	if err := detachMounts(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// detachMounts lazily unmounts every mount below dir, then checks that
// none is left.
func detachMounts(dir string) error {
	for try := 0; try < 2; try++ {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			return fmt.Errorf("cannot tell what is mounted under %s (%v): not removed", dir, err)
		}
		mps := mountsUnder(f, dir)
		f.Close()
		if len(mps) == 0 {
			return nil
		}
		if try == 1 {
			return fmt.Errorf("%s still has mounts (%s): not removed; unmount them (umount -R %s), then remove it", dir, strings.Join(mps, ", "), dir)
		}
		for _, mp := range mps {
			_ = syscall.Unmount(mp, syscall.MNT_DETACH)
		}
	}
	return nil
}

// DiskBytes is the disk space the tree at dir takes: its files' blocks,
// each hard-linked file counted once.
func DiskBytes(dir string) (int64, error) {
	type ino struct{ dev, ino uint64 }
	seen := map[ino]bool{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		k := ino{uint64(st.Dev), st.Ino}
		if st.Nlink > 1 && seen[k] {
			return nil
		}
		seen[k] = true
		total += st.Blocks * 512
		return nil
	})
	return total, err
}

// Remove removes version's root under home: renamed out of its place
// first (a lab looking for it finds none), then deleted.
func Remove(home, version string) error {
	if _, err := CheckVersion(version); err != nil {
		return err
	}
	dir := Dir(home)
	final := filepath.Join(dir, version)
	if _, err := os.Lstat(final); os.IsNotExist(err) {
		return fmt.Errorf("%w of PHP %s to remove (phptune php list shows the roots)", ErrNotMade, version)
	}
	unlock, err := lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	gone, err := os.MkdirTemp(dir, ".work-remove-")
	if err != nil {
		return err
	}
	if err := os.Rename(final, filepath.Join(gone, version)); err != nil {
		os.Remove(gone)
		return err
	}
	return removeTree(gone)
}
