package lab

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// serviceDataDirs are the directories whose entries, owned by an account,
// mark it as a system service's account (see CheckAccount).
var serviceDataDirs = []string{"/var/lib", "/var/spool", "/var/cache", "/var/log", "/etc", "/run"}

// gatherAccountFacts reads what CheckAccount needs about an account: the
// first entry directly under serviceDataDirs it owns (in sorted order),
// and whether it owns docroot (the directory itself, "" for none). Only
// metadata is read (lstat), nothing is followed.
func gatherAccountFacts(a *account, docroot string) AccountFacts {
	f := AccountFacts{Name: a.Name, UID: a.UID, GID: a.GID, Docroot: docroot}
	f.ServiceData = ownedEntry(a.UID, serviceDataDirs)
	if docroot != "" {
		if st, err := os.Stat(docroot); err == nil {
			if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Uid == a.UID {
				f.OwnsDocroot = true
			}
		}
	}
	return f
}

// ownedEntry returns the first entry directly under one of dirs that uid
// owns, "" when there is none.
func ownedEntry(uid uint32, dirs []string) string {
	for _, dir := range dirs {
		d, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		sort.Strings(names)
		for _, n := range names {
			p := filepath.Join(dir, n)
			st, err := os.Lstat(p)
			if err != nil {
				continue
			}
			if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Uid == uid {
				return p
			}
		}
	}
	return ""
}
