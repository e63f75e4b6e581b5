package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/servers/mariadb"
)

// A site lab's MariaDB root password is in no file the lab can read:
// only root's secrets.json (0600) holds it. Root's own tools — the dump
// load, the snapshot's mariadb-dump, lab reset's client — get it in an
// option pipe (the file /dev/fd/3), run on the host side of the seal as
// the lab's MariaDB account (DBUser), in the lab's cgroup: the site's
// account can neither read that process's memory or descriptors (another
// uid: no ptrace, no /proc/PID/fd) nor see it (another pid namespace).

// rootOptionFD is the descriptor the option pipe reaches a client on.
const rootOptionFD = 3

// rootClient runs bin (the mariadb client or mariadb-dump) against the
// lab's socket as root of the lab's server, as dbAcct, with args after
// the option file; stdin, when set, feeds it; stdout, when nil, goes
// with stderr to MariaDB's capture in out/.
func (l *Lab) rootClient(ctx context.Context, dbAcct *account, bin string, args []string, rootPassword string, stdin io.Reader, stdout io.Writer, limit time.Duration) error {
	y := layout{l.Dir}
	conf := mariadb.ClientConf(l.MariaDBSocket, "root", rootPassword)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// The pipe is root's, mode 0600: the client opens /dev/fd/3 again as
	// its own account.
	if err := unix.Fchown(int(r.Fd()), int(dbAcct.UID), int(dbAcct.GID)); err != nil {
		w.Close()
		return fmt.Errorf("handing the option pipe to %s: %v", dbAcct.Name, err)
	}
	_, err = w.WriteString(conf) // a few hundred bytes: the pipe holds them
	w.Close()
	if err != nil {
		return err
	}
	logf, err := y.openOut("mariadb")
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, append([]string{fmt.Sprintf("--defaults-file=/dev/fd/%d", rootOptionFD)}, args...)...)
	cmd.SysProcAttr = dbAcct.sysProcAttr()
	cmd.ExtraFiles = []*os.File{r}
	cmd.Env = []string{labPath, "HOME=/nonexistent", "LC_ALL=C.UTF-8"}
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, logf, logf
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := l.runRecordedWith(ctx, cmd, "mariadb-root", limit, l.Limits.startCapped); err != nil {
		tail := ""
		if data, rerr := l.readLog(logFile{y.p(outDir), "mariadb.out"}); rerr == nil {
			tail = ": " + lastLines(string(data), 3)
		}
		return fmt.Errorf("%v (log: %s)%s", err, y.outFile("mariadb"), tail)
	}
	return nil
}
