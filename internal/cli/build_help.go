package cli

import "github.com/phptune/phptune/internal/build/phpbuild"

// buildLong is build's --help text; it names the build cache.
func buildLong() string {
	return `build compiles the installed php-fpm's PHP from the distro's source package
with Debian's own configure choices (read from the package's debian/rules),
together with every shared extension the installed php-fpm enables (mysqli,
mbstring, xml...: each with Debian's flags for it), and keeps php-fpm, php,
php-cgi and those extensions in phptune's build cache (` + phpbuild.Dir() + `).
A lab runs a build with --set php.build=ID (compare, tune --challenges too).

Variants:
  plain    Debian's flags, rebuilt here.
  pgo      GCC profile-guided optimisation: make prof-gen, then the instrumented
           php-fpm serves --train APP[:WORKLOAD] over FastCGI under phptune's
           generator with opcache (hello, phpinfo, strings from a private
           docroot; io and wordpress[:front|mix|comment] in a lab of their own
           with MariaDB; default strings), then prof-use.
  pgo-lto  pgo with gcc's link-time optimisation (-flto=auto), except the
           two files that keep PHP's VM registers in global register
           variables (Zend/zend_execute.c, opcache's JIT helpers), which
           an LTO link cannot handle.
  bolt, pgo-bolt, pgo-lto-bolt
           plain, pgo or pgo-lto linked with its relocations kept, then its
           php-fpm rewritten by LLVM BOLT (Debian's bolt-16): instrumented
           with llvm-bolt -instrument, trained like pgo on --train, and
           laid out from that profile (hot blocks and functions together,
           cold code split away).

The source: apt-get source through a private sources list and apt state under
the build cache (nothing under /etc changes). --php 8.4 builds Debian 13
(trixie)'s php8.4 source instead: the private list gets a deb-src line for
trixie, the build compiles every extension the installed php-fpm enables that
PHP 8.4's source has (opcache, mysqli, mbstring, xml, curl, gd, intl, zip...),
and names those it cannot have (Debian 12 builds APCu, redis, imagick... for
8.2 only): a lab of the build runs without them, with the installed 8.2's
php.ini. When the archive serves no php8.4 source, measure Debian 13's own
php8.4-fpm binaries instead (not rebuilt here): phptune php add 8.4. When the archive no longer serves
the installed version, the newest source of the same PHP it serves is built,
and every output naming that build says it is OLDER than the installed binary
(missing its security fixes); give the exact version with --source.

Security: every step runs as the unprivileged account phptune-build (created on
first use), training as the lab account; root never runs a build's binary.
Every build step runs with the lowest CPU priority (nice 19, SCHED_IDLE), so a
build takes only CPU nobody else wants; --jobs is make's -j (default 2).

--cflags adds compiler flags after Debian's (optimisation, code generation,
warnings and macros only: -O3, -march=native, -fno-semantic-interposition,
-fno-stack-protector -U_FORTIFY_SOURCE...). They are part of the build's key
and shown wherever the build is named; flags that drop Debian's hardening
trade safety for speed, a choice phptune leaves to you.

A build is complete or absent: Ctrl-C stops every process of it and keeps
nothing. The same request again returns the existing build at once (--rebuild
to make it again). Missing build dependencies are installed when run as root
(like phptune setup), otherwise the apt-get line is printed.

Timings measured on a 2-core VM: see docs/build.md.`
}
