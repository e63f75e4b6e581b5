// Package dbcopy copies one database of a running MariaDB server (a site's
// production database) into a lab's own MariaDB: Dump streams a
// consistent, read-only logical copy made by Debian's mariadb-dump, Load
// feeds a dump (plain or gzip) to the lab's server and creates the app's
// account there with the name, host, password and rights its
// configuration and production's grants give it, and Budget refuses a
// database that would not fit the lab.
//
// Security model. Every client program (mariadb-dump, mariadb) runs as an
// unprivileged account the caller names (the lab's), never as root: the
// dump and the data it carries are the site's, whose code is hostile, and
// the lab's client only ever acts with the lab's rights. Passwords reach
// the programs in an option file that is never on disk: a pipe, owned by
// that account, named as /dev/fd/3 by --defaults-file (the first option,
// so no other option file is read either). Nothing carries a password on a
// command line (world-readable in /proc) or in the environment. The lab's
// client runs with --sandbox: a dump cannot run shell commands (\!) or
// read files (source) through it. Root only moves bytes between pipes.
//
// Production is only read: mariadb-dump --single-transaction takes a
// consistent snapshot without locking InnoDB tables, --quick streams rows,
// and the size that progress is measured against comes from the
// database's directory (package site), not from information_schema,
// whose tables make temporary tables on the server.
//
// A physical copy (mariadb-backup) is measured beside the logical one in
// bench/dbcopy.sh but not offered: see docs/dbcopy.md for why.
package dbcopy
