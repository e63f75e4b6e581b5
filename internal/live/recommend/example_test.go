package recommend_test

import (
	"fmt"

	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
)

func ExampleFiles() {
	rec, _ := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=8", "opcache.validate_timestamps=off"})
	files := recommend.Files(knob.Defaults(), rec, recommend.Target{PHPVersion: "8.2"})
	fmt.Print(files[recommend.PoolFile])
	// Output:
	// ; phptune recommendation: php-fpm pool settings.
	// ; Set these in /etc/php/8.2/fpm/pool.d/www.conf (replacing the same directives),
	// ; then check and reload: php-fpm8.2 -t && systemctl reload php8.2-fpm
	// ; pm.status_path is what phptune observes; keep it reachable from loopback only.
	// [www]
	// user = www-data
	// group = www-data
	// listen = "/run/php/php8.2-fpm.sock"
	// listen.owner = www-data
	// listen.group = www-data
	// listen.mode = 0660
	// listen.backlog = 511
	// pm = static  ; phptune: was dynamic
	// pm.max_children = 8  ; phptune: was 5
	// pm.max_requests = 0
	// pm.status_path = "/fpm-status"
	// catch_workers_output = yes
	// decorate_workers_output = no
}
