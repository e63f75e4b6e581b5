package livehost

import (
	"context"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestProbeAsksAgainWhileTheScoreboardIsBusy: php-fpm's status page
// answers 500 "Internal error..." while its scoreboard's lock is taken for
// a moment (CI stop 33 counted one during a reload as a dropped request).
// The probe asks again; the same answer persisting is still a failure.
func TestProbeAsksAgainWhileTheScoreboardIsBusy(t *testing.T) {
	page, err := os.ReadFile("../../servers/status/fpmstatus/testdata/idle_full.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		busy     int64 // answers of 500 before the page
		body     string
		wantErr  string
		wantAsks int64
	}{
		{"answers at once", 0, "", "", 1},
		{"busy once", 1, "Internal error. Please review log file for errors.", "", 2},
		{"busy twice", 2, "Internal error. Please review log file for errors.", "", 3},
		{"busy throughout", 99, "Internal error. Please review log file for errors.", "answered 500", scoreboardTries},
		{"another 500", 1, "Primary script unknown", "answered 500", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "fpm.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			var asks atomic.Int64
			go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if asks.Add(1) <= tc.busy {
					w.WriteHeader(500)
					w.Write([]byte(tc.body))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(page)
			}))
			f := FPM{Listen: "unix:" + sock, StatusPath: "/status"}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = f.probeOnce(ctx)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("probe: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("probe: %v, want %q", err, tc.wantErr)
			}
			if got := asks.Load(); got != tc.wantAsks {
				t.Errorf("asked %d times, want %d", got, tc.wantAsks)
			}
		})
	}
}
