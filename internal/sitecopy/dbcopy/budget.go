package dbcopy

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Budget is what a lab can hold: the free space of the filesystem of its
// directory, and its memory cap (0: none).
type Budget struct {
	Dir         string
	FreeBytes   int64
	MemoryBytes int64
}

// DiskShare is the part of the free space a copy may take: the rest is
// left to the filesystem's other users (production's logs, its own
// database growing meanwhile).
const DiskShare = 0.8

// CopiesOnDisk is how many times a database's size a lab holds: the copy
// in its MariaDB's data directory and the dump `lab reset` restores.
const CopiesOnDisk = 2

// NewBudget reads the free space (available to unprivileged users) of
// dir's filesystem (of its nearest existing parent while dir is not made
// yet); memoryMax is the lab's memory cap.
func NewBudget(dir string, memoryMax int64) (Budget, error) {
	dir = existingParent(dir)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Budget{}, fmt.Errorf("reading the free space of %s: %v", dir, err)
	}
	return Budget{Dir: dir, FreeBytes: int64(st.Bavail) * int64(st.Bsize), MemoryBytes: memoryMax}, nil
}

// Check refuses a database of size bytes (on disk) that would not fit:
// CopiesOnDisk times its size above DiskShare of the free space, or,
// under a memory cap, a database larger than the cap (its pages could
// never all be in the lab's buffer pool, so the lab would measure disk
// reads that production, with its memory, may never make). A size of 0
// (unknown) is not refused: the caller says that the check was not made.
func (b Budget) Check(size int64) error {
	if size <= 0 {
		return nil
	}
	need := CopiesOnDisk * size
	if allowed := int64(float64(b.FreeBytes) * DiskShare); need > allowed {
		return fmt.Errorf("the database (%s on disk) does not fit the lab: a copy and its reset snapshot need about %s, and %s may use %s (%.0f%% of its %s free); give a trimmed dump with --db-dump FILE, or free disk space (or set PHPTUNE_HOME on a larger filesystem)",
			Size(size), Size(need), b.Dir, Size(allowed), DiskShare*100, Size(b.FreeBytes))
	}
	if b.MemoryBytes > 0 && size > b.MemoryBytes {
		return fmt.Errorf("the database (%s on disk) is larger than the lab's memory cap (--memory-max %s): the lab would measure disk reads; raise --memory-max above %s, or give a trimmed dump with --db-dump FILE",
			Size(size), Size(b.MemoryBytes), Size(size))
	}
	return nil
}

// Size writes a byte count for people (binary units).
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// existingParent is dir or its nearest parent that exists: the filesystem
// a directory not made yet will be made on.
func existingParent(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == "/" {
			return d
		}
	}
}
