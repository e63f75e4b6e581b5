package cli

import (
	"errors"

	"github.com/phptune/phptune/internal/model/outdir"
)

// outDirHint is the fix for a refused output directory.
const outDirHint = "Try: -o DIR naming a new directory (phptune creates it; an existing one must be empty, yours and writable by you alone)"

// checkOutDir refuses, before a tune starts, an output directory it would
// refuse at its end. Empty means the default, ./phptune-tune-RUN.
func checkOutDir(dir string) error {
	return checkOutDirFor(dir, "phptune-tune-RUN", "tune")
}

// checkOutDirFor refuses, before a command starts, the -o directory that
// outdir.Create would refuse, or for the default directory def a working
// directory that cannot be written.
func checkOutDirFor(dir, def, command string) error {
	if dir != "" {
		if err := outdir.Check(dir); err != nil {
			return usageErr(outDirHint, "-o %v", err)
		}
		return nil
	}
	if err := outdir.CheckWorkingDir(); err != nil {
		return usageErr("Run phptune "+command+" in a directory you can write, or give -o DIR", "the default output directory ./%s: the working directory is not writable: %v", def, err)
	}
	return nil
}

// createOutDir makes a command's output directory (outdir.Create: a new
// one, or an empty one of yours only you can write), refused as a usage
// error naming the fix.
func createOutDir(dir string) (*outdir.Dir, error) {
	d, err := outdir.Create(dir)
	return d, outDirErr(err)
}

// reopenOutDir opens a resumed run's output directory again, or creates
// it when it is gone.
func reopenOutDir(dir string) (*outdir.Dir, error) {
	d, err := outdir.ReopenOrCreate(dir)
	return d, outDirErr(err)
}

func outDirErr(err error) error {
	var re *outdir.RefusedError
	if errors.As(err, &re) {
		return usageErr(outDirHint, "output directory %v", err)
	}
	return err
}

// readTrusted reads a file a command acts on (a knob file, a tune's
// result.json): as root, only one no other account could have written
// (outdir.ReadTrusted), refused as a usage error naming the owner and the
// fix.
func readTrusted(path string) ([]byte, error) {
	b, err := outdir.ReadTrusted(path)
	var re *outdir.RefusedError
	if errors.As(err, &re) {
		return nil, usageErr("Run phptune tune again to get a directory of root's, or check the file and make it root's: chown root FILE; chmod go-w FILE DIR", "%v", err)
	}
	return b, err
}
