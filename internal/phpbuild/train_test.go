package phpbuild

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A php-fpm that exits while starting (the BOLT-instrumented one did) must
// end the training with its exit status, and the deferred wait after it
// must not block: the first version read the exit from a channel once in
// waitSocket, and the deferred second read hung the build forever.
func TestWaitSocketProcessExits(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := waitFor(cmd)
	err := waitSocket(context.Background(), filepath.Join(t.TempDir(), "none.sock"), 0, w)
	if err == nil || !strings.Contains(err.Error(), "exited while starting (exit status 3)") {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-w.done: // a second waiter is not blocked
	case <-time.After(5 * time.Second):
		t.Fatal("a second wait blocked")
	}
}
