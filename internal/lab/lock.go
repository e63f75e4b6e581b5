package lab

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Every command that changes a lab (up, apply, reset, down, and status when
// it cleans a dead lab) holds the lab's lock: flock on its directory. A
// lock dies with its holder, so a crashed phptune never leaves a lab
// locked; a command that finds a lab locked never reaps it.

// errBusy says another phptune holds the lab's lock.
var errBusy = errors.New("lab is busy")

// lockWait is how long a command waits for a busy lab.
var lockWait = 2 * time.Minute

// lockLab locks the lab directory dir; with wait it retries until
// lockWait passes. It fails with ErrNoLab when dir is gone (or was replaced)
// once the lock is held.
func lockLab(dir string, wait bool) (unlock func(), err error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("%w: %s is gone", ErrNoLab, dir)
		}
		return nil, fmt.Errorf("locking %s: %v", dir, err)
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
	// The directory may have been removed (and even made again) while we
	// waited: the lock must be on the one that is there now.
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Lstat(dir, &b) != nil || a.Ino != b.Ino || a.Dev != b.Dev {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: %s was removed", ErrNoLab, dir)
	}
	return func() { syscall.Close(fd) }, nil
}
