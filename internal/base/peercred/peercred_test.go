package peercred

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestDialChecksTheListenersUID(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
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
			c.Close()
		}
	}()
	ctx := context.Background()
	for _, tc := range []struct {
		uid     int
		wantErr bool
	}{
		{os.Geteuid(), false},
		{Any, false},
		{os.Geteuid() + 4242, true},
	} {
		c, err := Dial(ctx, "unix", sock, tc.uid)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "not as the lab's account") {
				t.Errorf("uid %d: err = %v, want a refusal", tc.uid, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("uid %d: %v", tc.uid, err)
			continue
		}
		c.Close()
	}
}

func TestCheckFDNamesBothAccounts(t *testing.T) {
	err := CheckFD(&syscall.Ucred{Pid: 7, Uid: 0}, 998, "/x.sock")
	if err == nil || !strings.Contains(err.Error(), "uid 0") || !strings.Contains(err.Error(), "uid 998") {
		t.Fatalf("err = %v", err)
	}
}

func TestCredsNamesTheListener(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cred, err := Creds(c)
	if err != nil || int(cred.Pid) != os.Getpid() || int(cred.Uid) != os.Geteuid() {
		t.Errorf("creds %+v, %v; want this process", cred, err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	tc, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := Creds(tc); err == nil {
		t.Error("a TCP connection gave credentials")
	}
}
