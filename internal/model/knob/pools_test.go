package knob

import (
	"strings"
	"testing"
)

func TestPoolShares(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		// want[i] is pool i's max_children, start, min_spare, max_spare.
		want [][4]int64
	}{
		{"one pool is c itself", []string{"pm.max_children=10"}, [][4]int64{{10, 2, 1, 3}}},
		{"even split", []string{"fpm.pools=2", "pm.max_children=10", "pm=static"}, [][4]int64{{5, 1, 1, 2}, {5, 1, 1, 1}}},
		{"remainder to the first", []string{"fpm.pools=3", "pm.max_children=10"}, [][4]int64{{4, 1, 1, 1}, {3, 1, 1, 1}, {3, 1, 1, 1}}},
		{"dynamic bounds split", []string{"fpm.pools=2", "pm.max_children=40", "pm.start_servers=10", "pm.min_spare_servers=5", "pm.max_spare_servers=15"},
			[][4]int64{{20, 5, 3, 8}, {20, 5, 2, 7}}},
		{"one worker each", []string{"fpm.pools=4", "pm.max_children=4"}, [][4]int64{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Defaults().Apply(tt.set)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			shares := c.PoolShares()
			if len(shares) != len(tt.want) {
				t.Fatalf("%d shares, want %d", len(shares), len(tt.want))
			}
			var total int64
			for i, s := range shares {
				got := [4]int64{s.Int("pm.max_children"), s.Int("pm.start_servers"), s.Int("pm.min_spare_servers"), s.Int("pm.max_spare_servers")}
				if got != tt.want[i] {
					t.Errorf("pool %d: got %v, want %v", i, got, tt.want[i])
				}
				if s.Pools() != 1 {
					t.Errorf("pool %d: fpm.pools=%d in a share", i, s.Pools())
				}
				if err := s.Validate(); err != nil {
					t.Errorf("pool %d does not validate: %v", i, err)
				}
				total += s.Int("pm.max_children")
			}
			if total != c.Int("pm.max_children") {
				t.Errorf("shares hold %d workers, the pool %d", total, c.Int("pm.max_children"))
			}
		})
	}
}

func TestTopologyRules(t *testing.T) {
	defer func(f func() int) { CPUs = f }(CPUs)
	CPUs = func() int { return 2 }
	tests := []struct {
		name string
		set  []string
		want string // "" valid, else part of the error
	}{
		{"pools up to the workers", []string{"fpm.pools=5", "pm.max_children=5"}, ""},
		{"more pools than workers", []string{"fpm.pools=6", "pm.max_children=5"}, "fpm.pools=6 is greater than pm.max_children=5"},
		{"pools only behind nginx", []string{"server=apache-event-fpm", "fpm.pools=2"}, "belongs to server nginx-fpm"},
		{"keepalive within the pool (auto = 2 workers)", []string{"pm.max_children=8", "nginx.fastcgi_keepalive=3"}, ""},
		{"keepalive as large as the pool", []string{"pm.max_children=8", "nginx.fastcgi_keepalive=4"}, "keeps up to 8 idle FastCGI connections (4 x 2 nginx workers), not fewer than pm.max_children = 8"},
		{"keepalive counts explicit workers", []string{"pm.max_children=8", "nginx.worker_processes=1", "nginx.fastcgi_keepalive=7"}, ""},
		{"keepalive per pool", []string{"pm.max_children=9", "fpm.pools=2", "nginx.worker_processes=1", "nginx.fastcgi_keepalive=4"}, "the smallest pool's share of pm.max_children (9 split 2 ways) = 4: php-fpm ties a worker"},
		{"keepalive names the range", []string{"pm.max_children=5", "nginx.fastcgi_keepalive=3"}, "valid: 0..2"},
		{"keepalive off is always fine", []string{"pm=static", "pm.max_children=1", "nginx.fastcgi_keepalive=0"}, ""},
		{"keepalive only behind nginx", []string{"server=caddy-fpm", "nginx.fastcgi_keepalive=1"}, "belongs to server nginx-fpm"},
		{"rlimit unset", []string{"nginx.worker_connections=4096"}, ""},
		{"rlimit holds twice the connections", []string{"nginx.worker_connections=4096", "nginx.worker_rlimit_nofile=8192"}, ""},
		{"rlimit below twice the connections", []string{"nginx.worker_connections=4096", "nginx.worker_rlimit_nofile=5000"}, "nginx.worker_rlimit_nofile=5000 is below 2 x nginx.worker_connections = 8192"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Defaults().Apply(tt.set)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
