package seal

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestForwardChecksTheListener: the forwarder relays to the unix socket
// only when the account it was told listens there; a socket of another
// account under that name (a lab's link to another server's socket) gets
// nothing from the host.
func TestForwardChecksTheListener(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "phptune-forward-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "http.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("served\n"))
			c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := func(uid int) string {
		addr, err := Forward(ctx, "127.0.0.1:0", sock, uid)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if got := get(os.Geteuid()); got != "served\n" {
		t.Errorf("the listener's own account: %q", got)
	}
	if got := get(os.Geteuid() + 1); got != "" {
		t.Errorf("another account's socket was relayed: %q", got)
	}
}
