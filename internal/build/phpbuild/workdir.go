package phpbuild

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// cleanStale kills what an interrupted build left running and removes its
// work directories. The lock is held: no build runs.
func (b *builder) cleanStale() {
	if b.build.drop {
		if n := reapAccount(b.build.UID); n > 0 {
			fmt.Fprintf(b.o.Progress, "build: stopped %d process(es) an interrupted build left\n", n)
		}
	}
	work := filepath.Join(Dir(), ".work")
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		p := filepath.Join(work, e.Name())
		if strings.HasPrefix(e.Name(), "tmp-") {
			b.stopTraining(p)
		}
		if e.Name() != "apt" {
			_ = os.RemoveAll(p)
		}
	}
	stages, _ := filepath.Glob(filepath.Join(Dir(), ".stage-*"))
	for _, s := range stages {
		_ = os.RemoveAll(s)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// mkWork creates the work tree: root-owned, the source directory the
// build account's, the profile directory the lab account's.
func (b *builder) mkWork() error {
	b.work = filepath.Join(Dir(), ".work", "tmp-"+randHex(6))
	b.logs = filepath.Join(b.work, "logs")
	for _, d := range []string{b.work, b.logs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	uid, gid := b.build.ids()
	src := filepath.Join(b.work, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return err
	}
	if uid >= 0 {
		if err := os.Lchown(src, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// discardUnless discards the work tree of a build that failed: deferred
// once mkWork made it, with *done set when the build completed.
func (b *builder) discardUnless(done *bool) {
	if !*done {
		b.discard(true)
	}
}

// discard removes the work tree of a build that did not complete, after
// its processes are gone.
func (b *builder) discard(failed bool) {
	if b.work == "" {
		return
	}
	b.stopTraining(b.work)
	if b.build.drop {
		reapAccount(b.build.UID)
	}
	if failed {
		// The logs of the last failed build are kept (root's files).
		keep := filepath.Join(Dir(), ".failed-logs")
		_ = os.RemoveAll(keep)
		_ = os.Rename(b.logs, keep)
	}
	_ = os.RemoveAll(b.work)
	b.work = ""
}

// mkProfDir creates the directory training writes profiles into: the lab
// account's (its php-fpm writes them), readable by the build account.
func (b *builder) mkProfDir(prof string) error {
	if err := os.Mkdir(prof, 0o755); err != nil {
		return err
	}
	if uid, gid := b.labAcct.ids(); uid >= 0 {
		return os.Lchown(prof, uid, gid)
	}
	return nil
}
