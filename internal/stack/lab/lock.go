package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Every command that changes a lab (up, apply, reset, down, and status when
// it cleans a dead lab) holds the lab's lock: flock on a file of its name in
// phptune's root-only locks directory (not on the lab directory, which the
// lab's own processes can open and could hold locked forever). A lock dies
// with its holder, so a crashed phptune never leaves a lab locked; a
// command that finds a lab locked never reaps it.

// errBusy says another phptune holds the lab's lock.
var errBusy = errors.New("lab is busy")

// lockWait is how long a command waits for a busy lab.
var lockWait = 2 * time.Minute

// lockLab locks the lab directory dir; with wait it retries until
// lockWait passes. It fails with ErrNoLab when dir is gone (or was replaced)
// once the lock is held.
func lockLab(dir string, wait bool) (unlock func(), err error) {
	locks := filepath.Join(Home(), "locks")
	if err := os.Mkdir(locks, 0o700); err != nil && !os.IsExist(err) {
		return nil, fmt.Errorf("making the labs' lock directory: %v", err)
	}
	if err := ownPrivateDir(locks, -1, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(locks, filepath.Base(dir)+".lock")
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking lab %s: %v", filepath.Base(dir), err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			syscall.Close(fd)
			return nil, fmt.Errorf("locking %s: %v", dir, err)
		}
		if !wait || time.Now().After(deadline) {
			syscall.Close(fd)
			return nil, fmt.Errorf("%w: another phptune is changing %s", errBusy, dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The lab may have been taken down while we waited.
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: %s is gone", ErrNoLab, dir)
	}
	return func() { syscall.Close(fd) }, nil
}

// lockFresh takes the lab's lock, waiting for it, and re-reads the lab's
// state under it: what another command changed meanwhile is seen.
func (l *Lab) lockFresh() (unlock func(), err error) {
	unlock, err = lockLab(l.Dir, true)
	if err != nil {
		return nil, err
	}
	if err := l.refresh(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}
