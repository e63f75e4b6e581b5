package cli

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// hostPHPVersion is the PHP version of the host's php-fpm (a variable so a
// test can stand in an older host).
var hostPHPVersion = func(bin *phpfpm.Binary) string { return bin.Version }

// checkKnobVersions refuses a recommendation holding a knob the host's
// php-fpm version does not have (the JIT's before PHP 8.0), naming each.
func checkKnobVersions(rec knob.Config, version string) error {
	errs := rec.Unavailable(version)
	if len(errs) == 0 {
		return nil
	}
	var msgs, names []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
		names = append(names, e.Knob)
	}
	return usageErr(fmt.Sprintf("Remove %s from the knob file, or tune again on this host's PHP", strings.Join(names, ", ")),
		"the recommendation holds a knob this host's php-fpm %s does not have: %s", version, strings.Join(msgs, "; "))
}
