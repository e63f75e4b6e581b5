package mariadb

import (
	"errors"
	"fmt"

	"github.com/phptune/phptune/internal/base/confpath"
)

// quoted returns p with every path quoted for my.cnf, or the first refusal.
func (p Paths) quoted() (Paths, error) {
	var firstErr error
	q := func(option, path string, syntax confpath.Syntax) string {
		out, err := syntax.Quote(path)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("MariaDB %s: %w", option, err)
		}
		return out
	}
	out := Paths{
		DataDir: q("datadir", p.DataDir, confpath.MyCnf),
		Socket:  q("socket", p.Socket, confpath.MyCnf),
		PidFile: q("pid-file", p.PidFile, confpath.MyCnf),
		Log:     q("log-error", p.Log, confpath.MyCnf),
		// tmpdir is a ':'-separated list of directories.
		TmpDir: q("tmpdir", p.TmpDir, confpath.MyCnfList),
	}
	if p.FilePriv != "" {
		out.FilePriv = q("secure_file_priv", p.FilePriv, confpath.MyCnf)
	}
	return out, firstErr
}

// clientValues quotes the values of a [client] file. A refused user or
// password is named, never shown.
func clientValues(socket, user, password string) (s, u, pw string, err error) {
	if s, err = confpath.MyCnf.Quote(socket); err != nil {
		return "", "", "", fmt.Errorf("MariaDB client socket: %w", err)
	}
	if u, err = confpath.MyCnf.QuoteValue(user); err != nil {
		return "", "", "", errors.New("the MariaDB user name holds a character my.cnf cannot carry")
	}
	if pw, err = confpath.MyCnf.QuoteValue(password); err != nil {
		return "", "", "", errors.New("the MariaDB password holds a character my.cnf cannot carry")
	}
	return s, u, pw, nil
}

// refusal is an option file MariaDB refuses to use: the reason in a
// comment, then an option that carries the reason as its value and that the
// program stops on, printing it. The client tools stop on an unknown option;
// mariadbd only complains about unknown options after it has started its
// storage engines (creating files in its default data directory), but
// rejects a bad binlog_format before it does anything.
func refusal(group string, err error) string {
	msg := confpath.Summary(err)
	quoted, qerr := confpath.MyCnf.QuoteValue("phptune refused to render this file: " + msg)
	if qerr != nil {
		quoted = `"phptune refused to render this file"`
	}
	option := "phptune-refused"
	if group == "mysqld" {
		option = "skip-networking\nbinlog_format"
	}
	return "# phptune refused to render this file: " + msg + "\n[" + group + "]\n" + option + " = " + quoted + "\n"
}
