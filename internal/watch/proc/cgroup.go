package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// unlimitedV1 is the smallest value cgroup v1 reports for "no limit": the
// kernel writes PAGE_COUNTER_MAX rounded to pages (9223372036854771712 on
// 4 KiB pages), so anything near 2^63 means unlimited.
const unlimitedV1 = int64(1) << 62

// MemoryLimit is the cgroup memory limit that applies to a process.
type MemoryLimit struct {
	// Bytes is the smallest limit on the process's cgroup and its
	// ancestors (the kernel enforces every one of them); 0 means none.
	Bytes int64
	// File is the file the limit was read from.
	File string
	// Version is 1 or 2; 0 when no memory controller was found.
	Version int
}

// ReadMemoryLimit finds the cgroup memory limit of pid: memory.max (v2) or
// memory.limit_in_bytes (v1, also on hybrid hosts where the memory controller
// stays on v1), the smallest along the path up to the root.
func (p *FS) ReadMemoryLimit(pid int) (MemoryLimit, error) {
	proc, err := p.lib.Proc(pid)
	if err != nil {
		return MemoryLimit{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	cgs, err := proc.Cgroups()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return MemoryLimit{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
		}
		return MemoryLimit{}, fmt.Errorf("reading cgroups of pid %d: %w", pid, err)
	}
	cgRoot := filepath.Join(p.sys, "fs", "cgroup")
	for _, cg := range cgs {
		if cg.HierarchyID != 0 && slices.Contains(cg.Controllers, "memory") {
			return p.walkLimit(filepath.Join(cgRoot, "memory"), cg.Path, "memory.limit_in_bytes", 1)
		}
	}
	for _, cg := range cgs {
		if cg.HierarchyID == 0 {
			base := cgRoot
			// Hybrid hosts mount v2 at .../unified; it has no memory
			// controller there, which walkLimit reports as no limit.
			if _, err := os.Stat(filepath.Join(cgRoot, "cgroup.controllers")); err != nil {
				base = filepath.Join(cgRoot, "unified")
			}
			return p.walkLimit(base, cg.Path, "memory.max", 2)
		}
	}
	return MemoryLimit{}, nil
}

func (p *FS) walkLimit(base, cgPath, file string, version int) (MemoryLimit, error) {
	best := MemoryLimit{Version: version}
	dir := path.Clean("/" + cgPath)
	for {
		f := filepath.Join(base, dir, file)
		b, err := os.ReadFile(f)
		if err == nil {
			s := strings.TrimSpace(string(b))
			if s != "max" {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return MemoryLimit{}, fmt.Errorf("%w: %s: %q", ErrParse, f, s)
				}
				if v < unlimitedV1 && (best.Bytes == 0 || v < best.Bytes) {
					best.Bytes, best.File = v, f
				}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return MemoryLimit{}, err
		}
		if dir == "/" {
			return best, nil
		}
		dir = path.Dir(dir)
	}
}
