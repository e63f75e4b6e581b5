package cli

import "github.com/phptune/phptune/internal/traffic/locust"

// exportAnsibleLong is export ansible's --help text.
const exportAnsibleLong = `phptune export ansible writes, into the new directory DIR, a playbook
(playbook.yml), a rollback playbook (rollback.yml) and the role phptune_apply
that put a recommendation (a tune's directory, or --knobs FILE as
recommended.knobs holds) on every host of an inventory the way phptune apply
puts it on one: php-fpm and PHP drop-ins next to the distro's files
(pool.d/zz-phptune.conf reopening the pool, conf.d/99-phptune.ini), nginx's
access_log off (/etc/nginx/conf.d/zz-phptune.conf) and MariaDB's
99-phptune.cnf, never editing them; php-fpm -t, nginx -t and mariadbd --help
--verbose on each whole configuration; graceful reloads (systemctl, or
SIGUSR2/SIGHUP to the master found by its title, run by root); MariaDB's
variables set live with SET GLOBAL and read back, never a restart; a health
check (php-fpm's master runs, an optional loopback check URL answers as
before); on any failure the previous files and MariaDB values back and the
servers reloaded. The rollout goes one host at a time (serial) and stops at
the first host that fails (max_fail_percentage: 0). DIR/README.md says how to
run it. DIR is made new (an existing one must be empty, yours and writable by
you alone); as root the recommendation is read only when no other account
could have written it, as apply reads it.

Refused, as by apply: another server's recommendation, several pools
(fpm.pools), a move of the pool's socket (listen=tcp). What needs each host's
own configuration read (nginx's keepalive_timeout, worker and listen
settings) is listed in the README for merging by hand.`

// exportAnsibleExample is export ansible's --help examples.
const exportAnsibleExample = `  phptune export ansible fleet phptune-tune-RUN
  phptune export ansible fleet --knobs recommended.knobs --pool www --php-version 8.2
  cd fleet && ansible-playbook -i inventory playbook.yml --check --diff`

// exportLocustLong is export locust's --help text; it names the Locust
// release the files run on.
func exportLocustLong() string {
	return `phptune export locust writes, into the new directory DIR, a locustfile
generated from the workload bench would send (--lab NAME with --workload,
--scenario, --workload-from-log, or one page of TARGET with -m, -H, --body,
--expect), a README with the commands for one machine, a master and its
workers, a Kubernetes manifest (the locustfile in a ConfigMap, a master
Deployment and Service, a worker Deployment with --replicas) and a compose
file. They run on Locust ` + locust.PinnedVersion() + ` without phptune; phptune import locust
reads the statistics back. Values of credential headers, and paths and bodies
that hold a credential (the rules of bench's redaction, --redact adding
names), are kept out of every file: the locustfile reads them from
PHPTUNE_SECRET_* environment variables the README lists.`
}

// exportLocustExample is export locust's --help examples.
const exportLocustExample = `  phptune export locust load --lab demo --workload mix -c 50 -d 5m --replicas 4
  phptune export locust load http://127.0.0.1:8080/ -H "Authorization: Bearer $TOKEN"`
