package sysctl

import "testing"

func TestHostSomaxconn(t *testing.T) {
	n := HostSomaxconn()
	if n < 0 {
		t.Skip("net.core.somaxconn is not readable here")
	}
	if n == 0 {
		t.Fatalf("HostSomaxconn() = 0: Linux's somaxconn is never 0")
	}
}
