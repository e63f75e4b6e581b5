package livehost

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/watch/proc"
)

var mariadbNets sync.Map // "pid:uid" -> driver network name

// OpenMariaDB connects to server s on its unix socket as this process's
// account, by MariaDB's unix_socket authentication (Debian's root logs in
// so; no password is read, sent or stored). Before a byte is sent the
// socket's listener is checked (SO_PEERCRED) to be s's process and
// account: a socket swapped for another server's is refused.
func OpenMariaDB(s MariaDBServer) (*sql.DB, error) {
	me, err := user.Current()
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%d:%d", s.PID, s.UID)
	name := "mariadb-peer-" + strings.ReplaceAll(key, ":", "-")
	if _, loaded := mariadbNets.LoadOrStore(key, name); !loaded {
		pid, uid := s.PID, s.UID
		mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", addr)
			if err != nil {
				return nil, err
			}
			if err := checkListener(c, pid, uid); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		})
	}
	c := mysql.NewConfig()
	c.Net, c.Addr, c.User = name, s.Socket, me.Username
	c.Timeout, c.ReadTimeout, c.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	d := sql.OpenDB(conn)
	d.SetMaxOpenConns(1)
	return d, nil
}

// checkListener refuses a unix socket whose listener is not process pid
// running as uid.
func checkListener(c net.Conn, pid, uid int) error {
	cred, err := peercred.Creds(c)
	if err != nil {
		return err
	}
	if int(cred.Pid) != pid || int(cred.Uid) != uid {
		return fmt.Errorf("refusing to talk to %s: its listener is pid %d as uid %d, not MariaDB's server (pid %d, uid %d)", c.RemoteAddr(), cred.Pid, cred.Uid, pid, uid)
	}
	return nil
}

// mariadbStatus and mariadbVars are what advise reads of a server.
var (
	mariadbStatus = []string{"Uptime", "Max_used_connections", "Threads_connected", "Threads_running", "Aborted_connects",
		"Connection_errors_max_connections", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
		"Created_tmp_tables", "Created_tmp_disk_tables", "Slow_queries", "Questions", "Com_select",
		"Qcache_hits", "Qcache_inserts", "Qcache_lowmem_prunes"}
	mariadbVars = []string{"version", "max_connections", "innodb_buffer_pool_size", "innodb_buffer_pool_size_max", "innodb_flush_log_at_trx_commit",
		"query_cache_type", "query_cache_size", "slow_query_log", "long_query_time", "tmp_table_size", "max_heap_table_size"}
)

// ReadMariaDB reads what advise needs of server s: its counters and
// variables, the size of its InnoDB tables (a sum over the persistent
// statistics, nothing of their content) and its process's memory.
// What cannot be read is said in the result's Error or DataError.
//
// It reads without side effects on what it reads: the counters first
// (SHOW GLOBAL STATUS, which counts no temporary table of its own), then
// each variable as @@GLOBAL.name and the size from
// mysql.innodb_index_stats, none of which makes a temporary table either.
// (SHOW VARIABLES with a WHERE makes one; a sum over
// information_schema.tables made over a hundred, a fifth of them on
// disk, and inflated the very Created_tmp_disk_tables advise judges.)
func ReadMariaDB(ctx context.Context, fs *proc.FS, s MariaDBServer) *advise.MariaDB {
	m := &advise.MariaDB{PID: s.PID, Socket: s.Socket, Status: map[string]int64{}, Vars: map[string]string{}}
	if mem, err := fs.ReadMemory(s.PID); err == nil {
		m.ResidentB = mem.PSS
	}
	d, err := OpenMariaDB(s)
	if err != nil {
		m.Error = err.Error()
		return m
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fail := func(what string, err error) *advise.MariaDB {
		m.Error = fmt.Sprintf("reading %s over %s (as this account, by unix_socket authentication: run advise as root): %v", what, s.Socket, err)
		return m
	}
	status, err := showGlobal(ctx, d, "STATUS", mariadbStatus)
	if err != nil {
		return fail("SHOW GLOBAL STATUS", err)
	}
	for k, v := range status {
		m.Status[k], _ = strconv.ParseInt(v, 10, 64)
	}
	if m.Vars, err = globalVars(ctx, d, mariadbVars); err != nil {
		return fail("its global variables", err)
	}
	m.Version = m.Vars["version"]
	dctx, dcancel := context.WithTimeout(ctx, 15*time.Second)
	defer dcancel()
	var size sql.NullInt64
	// Each index's size in pages, as InnoDB's persistent statistics hold
	// it (what information_schema.tables sums too); a table kept with
	// STATS_PERSISTENT=0 is not counted.
	err = d.QueryRowContext(dctx, "SELECT SUM(stat_value) * @@GLOBAL.innodb_page_size FROM mysql.innodb_index_stats WHERE stat_name = 'size'").Scan(&size)
	if err != nil {
		m.DataError = err.Error()
	}
	m.DataIndexB = size.Int64
	return m
}

// globalVars reads each of names as SELECT @@GLOBAL.name (no temporary
// table, unlike SHOW VARIABLES ... WHERE); a variable this server does
// not have (error 1193) is left out, as SHOW VARIABLES would.
func globalVars(ctx context.Context, d *sql.DB, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		var v sql.NullString
		// phptune's own names: letters and '_'.
		err := d.QueryRowContext(ctx, "SELECT @@GLOBAL."+n).Scan(&v)
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1193 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("@@GLOBAL.%s: %w", n, err)
		}
		out[n] = v.String
	}
	return out, nil
}

// showGlobal runs SHOW GLOBAL what for names and returns them by name.
func showGlobal(ctx context.Context, d *sql.DB, what string, names []string) (map[string]string, error) {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'" // phptune's own names: letters and '_'
	}
	rows, err := d.QueryContext(ctx, "SHOW GLOBAL "+what+" WHERE Variable_name IN ("+strings.Join(quoted, ",")+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v.String
	}
	return out, rows.Err()
}
