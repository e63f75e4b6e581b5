package labstack

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/phptune/phptune/internal/base/safewrite"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/stack/lab"
)

// LiveStartFile is the file in a site lab's directory that holds the live
// site's configuration as knob settings: lab.LiveKnobsFile, which lab up
// --site writes.
const LiveStartFile = lab.LiveKnobsFile

// liveStartLimit caps the bytes read from it.
const liveStartLimit = 1 << 20

// LiveStart is the live site's configuration a sealed site lab was started
// from (LiveStartFile in its directory): tune and compare on the lab start
// from it, production's configuration, rather than from whatever the lab
// runs now. ok is false when the lab is not sealed or has no such file.
// The file must be a regular file owned by root (or by phptune's own
// account) that nobody else can write: the lab's account never decides
// what a tune calls production.
func LiveStart(l *lab.Lab) (cfg knob.Config, ok bool, err error) {
	if !l.Sealed() {
		return nil, false, nil
	}
	path := filepath.Join(l.Dir, LiveStartFile)
	f, st, err := safewrite.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lab %s's live start %s: %w", l.Name, path, err)
	}
	defer f.Close()
	if s, isStat := st.Sys().(*syscall.Stat_t); !isStat || int(s.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return nil, false, fmt.Errorf("lab %s's live start %s is not phptune's own file (owned by another account or writable by others); take the lab down and up again: phptune lab down %s", l.Name, path, l.Name)
	}
	data, err := io.ReadAll(io.LimitReader(f, liveStartLimit+1))
	if err != nil {
		return nil, false, fmt.Errorf("lab %s's live start %s: %w", l.Name, path, err)
	}
	if len(data) > liveStartLimit {
		return nil, false, fmt.Errorf("lab %s's live start %s is larger than %d bytes; take the lab down and up again: phptune lab down %s", l.Name, path, liveStartLimit, l.Name)
	}
	cfg, err = knob.Defaults().ApplyFile(string(data))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, false, fmt.Errorf("lab %s's live start %s: %w; take the lab down and up again: phptune lab down %s", l.Name, path, err, l.Name)
	}
	return cfg, true, nil
}
