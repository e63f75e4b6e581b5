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
