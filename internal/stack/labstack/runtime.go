package labstack

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/noredirect"
	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/servers/status/phpstatus"
	"github.com/phptune/phptune/internal/servers/unit"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// What the lab's servers say about their caches, read around a
// measurement: the status script (lab.StatusScript) over php-fpm's socket,
// and MariaDB's InnoDB figures as the lab's database root. Both come from
// processes of the lab's account, so both are read as untrusted input:
// bounded, checked, parsed by package phpstatus.

// runtimeTimeout bounds all the reads of one measurement.
const runtimeTimeout = 10 * time.Second

// realpathReads is how many times the status script is requested: each
// php-fpm worker has its own realpath cache and the request goes to
// whichever worker is free, so a few reads find a worker that served the
// load (the largest cache is kept). opcache is shared: any read will do.
const realpathReads = 3

// innodbCounters are InnoDB's page request counters at one moment.
type innodbCounters struct {
	readRequests, reads int64
}

// readRuntime reads the lab's caches after a measurement: opcache and the
// realpath cache from the status script, InnoDB (labs with MariaDB)
// against the counters read before the load (before; nil when they
// could not be read). What cannot be read is named in Runtime.Errors.
func readRuntime(ctx context.Context, l *lab.Lab, before *innodbCounters) *results.Runtime {
	ctx, cancel := context.WithTimeout(ctx, runtimeTimeout)
	defer cancel()
	rt := &results.Runtime{}
	if l.FPMListen != "" || l.UnitControl != "" {
		for i := 0; i < realpathReads; i++ {
			op, rp, problems, err := readStatusScript(ctx, l)
			if err != nil {
				rt.Errors = append(rt.Errors, "status script: "+err.Error())
				break
			}
			if i == 0 {
				rt.Opcache = op
				rt.Errors = append(rt.Errors, problems...)
			}
			if rp != nil && (rt.Realpath == nil || rp.UsedB > rt.Realpath.UsedB) {
				reads := 0
				if rt.Realpath != nil {
					reads = rt.Realpath.Reads
				}
				rt.Realpath = rp
				rt.Realpath.Reads = reads
			}
			if rt.Realpath != nil {
				rt.Realpath.Reads++
			}
		}
	}
	if l.MariaDBSocket != "" {
		in, err := readInnoDB(ctx, l, before)
		if err != nil {
			rt.Errors = append(rt.Errors, "mariadb: "+err.Error())
		}
		rt.InnoDB = in
	}
	return rt
}

// statusReadLimit caps the bytes read from php-fpm for one status request:
// the body limit plus FastCGI's framing and the CGI head.
const statusReadLimit = phpstatus.MaxBytes + 16<<10

// readStatusScript requests the lab's status script straight from
// php-fpm, after checking that the socket's listener is the lab's account.
func readStatusScript(ctx context.Context, l *lab.Lab) (*results.OpcacheStatus, *results.RealpathStatus, []string, error) {
	if l.UnitControl != "" {
		return readStatusOverHTTP(ctx, l.URL+unit.StatusPath)
	}
	network, addr := l.FPMAddr()
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := peercred.Dial(ctx, network, address, l.PeerUID())
		if err != nil {
			return nil, err
		}
		return &cappedConn{Conn: c, left: statusReadLimit}, nil
	}
	const path = "/phptune-status.php"
	params := fcgi.Params(http.MethodGet, path, l.StatusScript(), nil, nil)
	resp, err := fcgi.GetWith(ctx, dial, network, addr, params, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if resp.Status != http.StatusOK {
		return nil, nil, nil, fmt.Errorf("answered %d: %.100q", resp.Status, resp.Body)
	}
	return parseStatus(resp.Body)
}

// readStatusOverHTTP requests the status script through the lab's web
// server (Unit runs PHP in its own processes: there is no FastCGI socket),
// on the lab's loopback port, reading at most statusReadLimit bytes.
func readStatusOverHTTP(ctx context.Context, u string) (*results.OpcacheStatus, *results.RealpathStatus, []string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	c := noredirect.Client(&http.Transport{Proxy: nil, DisableKeepAlives: true})
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, statusReadLimit+1))
	if err != nil {
		return nil, nil, nil, err
	}
	if len(body) > statusReadLimit {
		return nil, nil, nil, errTooLong
	}
	if err := noredirect.Check(resp); err != nil {
		return nil, nil, nil, fmt.Errorf("%s %v", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, nil, fmt.Errorf("%s answered %d: %.100q", u, resp.StatusCode, body)
	}
	return parseStatus(body)
}

// parseStatus reads the status script's answer with phpstatus.Parse and
// keeps the parts the tuner sizes from; the problems name every part
// refused.
func parseStatus(body []byte) (*results.OpcacheStatus, *results.RealpathStatus, []string, error) {
	r, err := phpstatus.Parse(body)
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Opcache, r.Realpath, r.Problems, nil
}

// errTooLong ends a read from a lab that sends more than it should.
var errTooLong = errors.New("the lab sent more than the status script prints")

// cappedConn fails reads after left bytes, so a hostile pool cannot make
// root hold a large answer in memory.
type cappedConn struct {
	net.Conn
	left int
}

func (c *cappedConn) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLong
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.Conn.Read(p)
	c.left -= n
	return n, err
}

// openLabRoot connects to the lab's MariaDB as its root (secrets.json),
// after the listener's account is checked.
func openLabRoot(l *lab.Lab) (*sql.DB, error) {
	sec, err := l.ReadSecrets()
	if err != nil {
		return nil, fmt.Errorf("reading lab %s's database credentials: %w", l.Name, err)
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), "root", sec.MariaDBRootPassword, "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// innodbStatusNames are the SHOW GLOBAL STATUS figures readInnoDB needs.
var innodbStatusNames = []string{"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads",
	"Innodb_buffer_pool_pages_data", "Innodb_buffer_pool_pages_total", "Innodb_page_size"}

// labGlobalStatus connects to the lab's MariaDB as root and reads SHOW
// GLOBAL STATUS; the caller closes db.
func labGlobalStatus(ctx context.Context, l *lab.Lab) (*sql.DB, map[string]int64, error) {
	db, err := openLabRoot(l)
	if err != nil {
		return nil, nil, err
	}
	st, err := globalStatus(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, st, nil
}

// readInnoDBCounters reads the page request counters (before a load).
func readInnoDBCounters(ctx context.Context, l *lab.Lab) (*innodbCounters, error) {
	ctx, cancel := context.WithTimeout(ctx, runtimeTimeout)
	defer cancel()
	db, st, err := labGlobalStatus(ctx, l)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return &innodbCounters{readRequests: st["Innodb_buffer_pool_read_requests"], reads: st["Innodb_buffer_pool_reads"]}, nil
}

// readInnoDB reads InnoDB's data and index size and the buffer pool after
// the load; the page requests are counted from before (the whole server's
// life when before is nil: MariaDB restarts only when its knobs change).
func readInnoDB(ctx context.Context, l *lab.Lab, before *innodbCounters) (*results.InnoDBStatus, error) {
	db, st, err := labGlobalStatus(ctx, l)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	in := &results.InnoDBStatus{PagesData: st["Innodb_buffer_pool_pages_data"], PagesTotal: st["Innodb_buffer_pool_pages_total"],
		PageSizeB: st["Innodb_page_size"], ReadRequests: st["Innodb_buffer_pool_read_requests"], Reads: st["Innodb_buffer_pool_reads"]}
	if before != nil && before.readRequests <= in.ReadRequests && before.reads <= in.Reads {
		in.ReadRequests -= before.readRequests
		in.Reads -= before.reads
	}
	var data, index, pool sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(SUM(DATA_LENGTH),0), COALESCE(SUM(INDEX_LENGTH),0) FROM information_schema.TABLES WHERE ENGINE='InnoDB'").Scan(&data, &index); err != nil {
		return nil, fmt.Errorf("information_schema.TABLES: %w", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size").Scan(&pool); err != nil {
		return nil, fmt.Errorf("innodb_buffer_pool_size: %w", err)
	}
	for _, f := range []struct {
		name string
		v    sql.NullString
		dst  *int64
	}{{"data size", data, &in.DataB}, {"index size", index, &in.IndexB}, {"innodb_buffer_pool_size", pool, &in.BufferPoolB}} {
		n, err := figure(f.v.String)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = n
	}
	return in, nil
}

// globalStatus reads innodbStatusNames from SHOW GLOBAL STATUS.
func globalStatus(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	// The names are constants: written into the statement, no prepared
	// statement needed.
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(innodbStatusNames, "','")+"')")
	if err != nil {
		return nil, fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		n, err := figure(value)
		if err != nil {
			return nil, fmt.Errorf("%.40s: %w", name, err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, n := range innodbStatusNames {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("SHOW GLOBAL STATUS has no %s", n)
		}
	}
	return out, nil
}

// figure parses a server's figure: a whole number in [0, 2^50].
func figure(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1<<50 {
		return 0, fmt.Errorf("%.30q is not a whole number in [0, 2^50]", s)
	}
	return n, nil
}
