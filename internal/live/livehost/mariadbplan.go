package livehost

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/watch/proc"
)

// FindMariaDB finds the host's running MariaDB server (MariaDBServers'
// trust rule), the one listening on socket when it is given.
func FindMariaDB(root, socket string) (MariaDBServer, error) {
	fs, err := proc.Default()
	if err != nil {
		return MariaDBServer{}, err
	}
	servers, err := MariaDBServers(fs, root)
	if err != nil {
		return MariaDBServer{}, err
	}
	return PickMariaDB(MariaDBUnder(servers, root, socket), socket)
}

// FindMariaDBStep finds the server, its drop-in directory and mariadbd,
// and describes them as a step (its variables not set yet). A server
// that is not found or has no included directory is an *InputError.
func FindMariaDBStep(root, socket string) (*MariaDBStep, error) {
	s, err := FindMariaDB(root, socket)
	if err != nil {
		return nil, inputErr("Start MariaDB, or name its socket with --mariadb-socket PATH", "the recommendation sets MariaDB's variables: %v", err)
	}
	dir, err := MariaDBDropInDir(s)
	if err != nil {
		return nil, inputErr("Give MariaDB's configuration an included directory, then run apply again", "%v", err)
	}
	bins, err := mariadb.Find()
	if err != nil {
		return nil, err
	}
	return &MariaDBStep{Server: s, Binary: bins.Server, Root: root, DropIn: filepath.Join(dir, MariaDBDropInName)}, nil
}

// PlanMariaDB is apply's MariaDB part: the step managing settings, with
// the live values they replace read first (and whether each is dynamic,
// set in settings), and the drop-in's content. restart asks for
// systemctl restart, allowed only on the host itself for a server that
// is its systemd service's main process (MainService).
func PlanMariaDB(ctx context.Context, root, socket string, restart bool, settings []MariaDBSetting) (*MariaDBStep, []byte, error) {
	st, err := FindMariaDBStep(root, socket)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range settings {
		st.Vars = append(st.Vars, s.Var)
	}
	before, dynamic, err := st.ReadLive(ctx, st.Vars)
	if err != nil {
		return nil, nil, fmt.Errorf("reading MariaDB's live values over %s (as root, by unix_socket): %w", st.Server.Socket, err)
	}
	st.Before, st.Dynamic = before, dynamic
	if restart {
		unit := MainService(ctx, root, st.Server.PID)
		if unit == "" {
			return nil, nil, inputErr("Leave out --restart-db (the dynamic variables are set live; the others take effect when you restart MariaDB yourself)",
				"--restart-db: MariaDB (pid %d) is not run by systemd here; phptune restarts it only with systemctl restart", st.Server.PID)
		}
		st.Restart = unit
	}
	for i := range settings {
		settings[i].Dynamic = dynamic[settings[i].Var]
	}
	return st, ComposeMariaDB(settings, before), nil
}

// RollbackMariaDB describes the MariaDB step for undoing the last apply:
// the drop-in on disk is that apply's, and records the values before it.
func RollbackMariaDB(ctx context.Context, root, socket string) (*MariaDBStep, error) {
	st, err := FindMariaDBStep(root, socket)
	if err != nil {
		return nil, err
	}
	if err := st.FromDropIn(ctx); err != nil {
		return nil, fmt.Errorf("reading MariaDB over %s: %w", st.Server.Socket, err)
	}
	return st, nil
}
