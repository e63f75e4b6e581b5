// Package phpbuild rebuilds the installed PHP from the distro's source
// package with the distro's own configure choices, optionally with GCC
// profile-guided optimisation trained by phptune's generator, and keeps each
// build in a cache a lab can run it from (`phptune build`, knob php.build).
//
// # Security design
//
// phptune runs as root; the code a lab runs (an app, a WordPress plugin) is
// hostile. A build adds two things root must not trust: a compiler run over
// source downloaded from the network, and profiles written by the lab's own
// account during training. The rules:
//
//   - Builds never run as root. Every step — apt-get source, dpkg-source,
//     evaluating debian/rules, buildconf, configure, make, gcc reading the
//     profiles, the extension check — runs as a dedicated system account,
//     BuildUser ("phptune-build", created like the lab's "phptune": system,
//     no home, no shell), in a process group of its own with the lowest CPU
//     priority (nice 19 and SCHED_IDLE, so a build only uses idle CPU).
//   - Nothing under /etc changes. The source comes from `apt-get source`
//     through a private apt configuration: a sources list of its own (the
//     system's deb entries turned into deb-src, read from /etc/apt but never
//     written), lists and caches under the build cache (-o Dir::Etc::sourcelist,
//     Dir::State, Dir::Cache), the system's /var/lib/dpkg/status read only.
//     It runs as the build account too.
//   - Where things live. The cache is lab.Home()+"/builds", root-owned
//     (0755). A build in progress works in builds/.work/KEY-RAND/ (root-owned):
//     src/ belongs to the build account (source, objects, binaries), prof/
//     to the lab account (the profiles training writes), logs/ and train/ to
//     root (root writes the logs from the children's output pipes and renders
//     the training configuration; it reads nothing the children wrote).
//   - Training. The instrumented php-fpm runs as the lab account ("phptune"),
//     in its own process group, writing its profiles with -fprofile-dir into
//     prof/ (-fprofile-update=atomic: several workers write the same files).
//     Those profiles are only ever read by gcc running as the build account,
//     never by root. A lab that plants links or garbage in prof/ can at most
//     spoil the build it trains: the build account owns nothing else.
//   - Completion. root copies the final php-fpm, php and php-cgi from the
//     work tree (opened without following links, regular files only) into
//     builds/.stage-ID/bin as root-owned 0755 files, writes record.json and
//     renames the stage to builds/ID: a build is complete or absent. The lab
//     account can run a completed build but write none of it; the build
//     account cannot change it either.
//   - root never executes a build's binary, version probes included: the
//     extension check and every probe run as the build account, training as
//     the lab account.
//   - One build at a time: an exclusive lock on builds/.lock (the cache) and,
//     as root, on /run/phptune-build.lock (the build account is the
//     machine's, shared by every PHPTUNE_HOME). A new build first reaps what
//     an interrupted one left: every process of the build account (only
//     builds run as it, and the machine-wide lock says none is running) and
//     the stale work directories.
//
// # Pipeline
//
// fetch (or --source) → flags (debian/rules evaluated by make as the build
// account, then filtered in Go: see ConfigureArgs) → buildconf → configure →
// make (plain) | make prof-gen → train → make prof-clean; make prof-use (pgo)
// → extension check (every .so of the distro's extension directory loaded
// into the built php-cli) → stage → rename.
//
// Training: apps without a database are served from a private docroot;
// io and wordpress are trained in a lab of their own (lab.Up with the
// distro's PHP, owned by the build so a killed build's lab is reaped): the
// instrumented php-fpm, as the lab account, serves the lab's docroot with
// the lab's pool environment and MariaDB, loaded over FastCGI with the
// lab's workload (front, mix, comment); nginx is not in the path.
//
// Not in this slice: the LTO and BOLT variants.
package phpbuild
