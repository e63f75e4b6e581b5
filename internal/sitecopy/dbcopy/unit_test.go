package dbcopy

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

func secret(s string) site.Secret { return site.NewSecret(s) }

func TestBudgetCheck(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name string
		b    Budget
		size int64
		err  string
	}{
		{"fits", Budget{Dir: "/lab", FreeBytes: 10 * gib}, 2 * gib, ""},
		{"unknown size", Budget{Dir: "/lab", FreeBytes: 0}, 0, ""},
		{"disk: two copies above 80% of free", Budget{Dir: "/lab", FreeBytes: 10 * gib}, 5 * gib, "need about 10.0 GiB, and /lab may use 8.0 GiB (80% of its 10.0 GiB free)"},
		{"memory cap", Budget{Dir: "/lab", FreeBytes: 100 * gib, MemoryBytes: gib}, 2 * gib, "larger than the lab's memory cap (--memory-max 1.0 GiB)"},
		{"under the memory cap", Budget{Dir: "/lab", FreeBytes: 100 * gib, MemoryBytes: 4 * gib}, 2 * gib, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Check(tt.size)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "--db-dump") {
				t.Fatalf("error %v, want one with %q and the fix --db-dump", err, tt.err)
			}
		})
	}
	b, err := NewBudget(t.TempDir(), 0)
	if err != nil || b.FreeBytes <= 0 {
		t.Fatalf("NewBudget: %+v %v", b, err)
	}
	if err := b.Check(b.FreeBytes); err == nil {
		t.Error("a database as large as the free space was accepted")
	}
}

func TestDecompressed(t *testing.T) {
	const sql = "CREATE TABLE t (id INT);\n"
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte(sql))
	z.Close()
	for name, in := range map[string][]byte{"plain": []byte(sql), "gzip": gz.Bytes(), "empty": nil} {
		r, err := Decompressed(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := io.ReadAll(r)
		if want := sql; name == "empty" {
			want = ""
			if string(got) != want {
				t.Errorf("%s: %q", name, got)
			}
		} else if string(got) != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if _, err := Decompressed(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0})); err == nil {
		t.Error("a broken gzip header was accepted")
	}
}

// TestOptionPipe reads the option file back through MariaDB's own reader
// (mariadb-dump --print-defaults) as the lab's account: every value, the
// password with quotes, spaces and '#' included, is exactly what was
// given, and the client reads no other option file.
func TestOptionPipe(t *testing.T) {
	bin, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed")
	}
	acct := testAccount(t)
	pw := `p'a"s s#w;rd\`
	for _, c := range []Conn{
		{Network: "unix", Address: "/run/my sql/mysqld.sock", User: "app", Password: pw},
		{Network: "tcp", Address: "127.0.0.1:3307", User: "app", Password: pw},
	} {
		conf, err := c.optionFile()
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := acct.clientCommand(bin, conf, "--print-defaults")
		if err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := run(context.Background(), nil, cmd); err != nil {
			t.Fatalf("%v: %s", err, errs.String())
		}
		got := out.String()
		for _, w := range []string{"--user=app ", "--password=" + pw + " ", "--max_allowed_packet=1G"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: reads back as %q, lacking %q", c.Network, got, w)
			}
		}
		if c.Network == "unix" && !strings.Contains(got, "--socket=/run/my sql/mysqld.sock --protocol=SOCKET") && !strings.Contains(got, "--protocol=SOCKET --socket=/run/my sql/mysqld.sock") {
			t.Errorf("socket not read back: %q", got)
		}
		if strings.Contains(got, "quote-names") {
			t.Errorf("the host's option files were read too: %q", got)
		}
		if strings.Contains(strings.Join(cmd.Args, " "), "s#w") {
			t.Errorf("the password is on the command line: %q", cmd.Args)
		}
	}
	for _, bad := range []Conn{{Network: "tcp", Address: "10.0.0.1:3306", User: "a"}, {Network: "remote", Address: "db:3306", User: "a"},
		{Network: "unix", Address: "/s", User: ""}, {Network: "unix", Address: "/s", User: "a", Password: "x\ny"}} {
		if _, err := bad.optionFile(); err == nil {
			t.Errorf("%+v: accepted", bad)
		} else if bad.Password != "" && strings.Contains(err.Error(), bad.Password) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// testAccount is phptune's unprivileged account (root) or the current
// user.
func testAccount(t *testing.T) Account {
	t.Helper()
	if os.Geteuid() != 0 {
		return Account{}
	}
	a, err := LookupAccount("phptune")
	if err != nil {
		t.Skip("no phptune account (a lab makes it on first use): " + err.Error())
	}
	return a
}

func TestRootIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root only")
	}
	if _, err := (Account{}).clientCommand("/bin/true", "[client]\n"); err == nil || !strings.Contains(err.Error(), "never run as root") {
		t.Errorf("running a client as root: %v", err)
	}
}
