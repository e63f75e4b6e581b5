package phproot

import (
	"fmt"
	"path/filepath"
)

// CLICommand is the command line that runs the root's PHP CLI (phpVERSION)
// on this host the way a lab runs its php-fpm (ForLab): through the
// root's own dynamic loader with the root's libraries as the only search
// path, with no ini file read (-n) and the extensions Debian 13's conf.d
// enables in the root loaded by absolute path (-d), so that code that
// declares a function or class one of them now has is judged as the lab
// would judge it. notes say which extensions could not be loaded.
func (r *Root) CLICommand() (argv, notes []string, err error) {
	libDir := r.Host("/usr/lib/x86_64-linux-gnu")
	loader := filepath.Join(libDir, "ld-linux-x86-64.so.2")
	cli := r.Host(r.CLI)
	for _, p := range []string{loader, cli} {
		if err := checkRootFile(p); err != nil {
			return nil, nil, fmt.Errorf("PHP root %s: %v; make it again: phptune php remove %s && phptune php add %s", r.Dir, err, r.Version, r.Version)
		}
	}
	lines, notes, err := rootExtensions(r)
	if err != nil {
		return nil, nil, err
	}
	argv = []string{loader, "--library-path", libDir, cli, "-n"}
	for _, l := range lines {
		argv = append(argv, "-d", l)
	}
	return argv, notes, nil
}
