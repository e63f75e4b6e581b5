package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/advise"
	"github.com/phptune/phptune/internal/livehost"
)

// TestHostFlagsSameEverywhere: advise, apply and rollback name the host,
// its master and its pool with the same flags.
func TestHostFlagsSameEverywhere(t *testing.T) {
	env := &Env{}
	for _, cmd := range []*cobra.Command{newAdviseCmd(env), newApplyCmd(env), newRollbackCmd(env)} {
		for _, want := range []string{"root", "fpm-config", "fpm-prefix", "ini-dir", "pool", "mariadb-socket"} {
			if cmd.Flags().Lookup(want) == nil {
				t.Errorf("%s has no --%s", cmd.Name(), want)
			}
		}
	}
}

func TestAdviseMasters(t *testing.T) {
	ms := []livehost.Master{{PID: 1, Conf: "/etc/php/8.2/fpm/php-fpm.conf"}, {PID: 2, Conf: "/srv/copy/etc/php/8.2/fpm/php-fpm.conf"}, {PID: 3, Conf: "/srv/copy2/php-fpm.conf"}}
	for _, tc := range []struct {
		root, conf string
		want       []int
		usage      bool
	}{
		{"/", "", []int{1, 2, 3}, false},
		{"/srv/copy", "", []int{2}, false},
		{"/srv/copy/", "", []int{2}, false},
		{"/", "/srv/copy2/php-fpm.conf", []int{3}, false},
		{"/srv/copy", "/srv/copy2/php-fpm.conf", nil, true},
		{"/srv/none", "", nil, true},
		{"relative", "", nil, true},
	} {
		f := hostFlags{root: tc.root, fpmConfig: tc.conf}
		got, err := f.adviseMasters(ms)
		var ue *UsageError
		if tc.usage != errors.As(err, &ue) {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		var pids []int
		for _, m := range got {
			pids = append(pids, m.PID)
		}
		if len(pids) != len(tc.want) {
			t.Errorf("%+v: %v", tc, pids)
			continue
		}
		for i := range pids {
			if pids[i] != tc.want[i] {
				t.Errorf("%+v: %v", tc, pids)
			}
		}
	}
	f := hostFlags{pool: "b"}
	if got := f.adviseePools([]advise.Pool{{Name: "a"}, {Name: "b"}}); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("--pool b kept %+v", got)
	}
}
