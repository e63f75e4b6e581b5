package livehost

import (
	"errors"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
)

// TestSelectMasters: advise keeps the masters of --root's host and of
// --fpm-config; a root or configuration no master matches is the user's
// mistake. keepPool keeps --pool's pool.
func TestSelectMasters(t *testing.T) {
	ms := []Master{{PID: 1, Conf: "/etc/php/8.2/fpm/php-fpm.conf"}, {PID: 2, Conf: "/srv/copy/etc/php/8.2/fpm/php-fpm.conf"}, {PID: 3, Conf: "/srv/copy2/php-fpm.conf"}}
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
		got, err := SelectMasters(ms, tc.root, tc.conf)
		var ue *InputError
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
	if got := keepPool([]advise.Pool{{Name: "a"}, {Name: "b"}}, "b"); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("--pool b kept %+v", got)
	}
}
