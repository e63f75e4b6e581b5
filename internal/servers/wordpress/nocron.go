package wordpress

import (
	"fmt"
	"strings"
)

// A lab of a user's WordPress site runs the site's own wp-config.php,
// which phptune does not edit (the docroot is the site's). WP-cron would
// then spawn a loopback request to wp-cron.php on page loads — run in the
// lab it adds unmeasured work to the trial it lands in; reaching
// production through the site's own URL it ran production's cron. The lab
// therefore turns WP-cron off for the measurement: WordPress skips
// spawning when DISABLE_WP_CRON is true (wp-includes/cron.php,
// _wp_cron), and the constant must exist before wp-settings.php runs.
// An auto_prepend_file runs before any script of the request, so it
// defines the constant without touching the site's files. A later
// define('DISABLE_WP_CRON', false) in the site's wp-config.php cannot undo
// it (PHP keeps the first value and logs a warning).
//
// Laravel and Drupal run their schedulers from the system's cron, not
// from page loads: a lab of them needs nothing (and starts no cron).

// NoCronPoolKey is the php-fpm pool setting that loads NoCronPrepend:
// php_admin_value, so that no script (nor the site's .user.ini) can turn
// it off.
const NoCronPoolKey = "php_admin_value[auto_prepend_file]"

// NoCronPrepend is the PHP file a lab of a WordPress site loads with
// auto_prepend_file (NoCronPoolLine): it defines DISABLE_WP_CRON and then
// includes, in order, the files chain names — the site's own
// auto_prepend_file, which the lab's setting replaces (a security plugin's
// firewall, say), and the lab's profiler's, when either is in use. Every
// chained path must be absolute; one holding a control character is
// refused.
func NoCronPrepend(chain ...string) (string, error) {
	var b strings.Builder
	b.WriteString("<?php\n// Rendered by phptune for a lab of a WordPress site: WP-cron is off while the lab\n")
	b.WriteString("// is measured (no loopback request to wp-cron.php on page loads).\n")
	b.WriteString("if (!defined('DISABLE_WP_CRON')) { define('DISABLE_WP_CRON', true); }\n")
	for _, p := range chain {
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("auto_prepend_file %q to chain after the lab's: not an absolute path; give the file's full path", p)
		}
		for _, r := range p {
			if r < 0x20 || r == 0x7f {
				return "", fmt.Errorf("auto_prepend_file %q to chain after the lab's holds a control character; rename the file", p)
			}
		}
		fmt.Fprintf(&b, "require %s;\n", phpString(p))
	}
	return b.String(), nil
}

// NoCronPoolLine is the phpfpm.Paths.ExtraPool line that loads the
// prepend file at path (a file of the lab's, root's, that the lab's
// account can read and not write).
func NoCronPoolLine(path string) string { return NoCronPoolKey + " = " + path }

// phpString is s as a PHP single-quoted string: only \ and ' are special.
func phpString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
