#!/usr/bin/env bash
# bench/dbcopy.sh — copying a site's database into a lab: logical against physical.
#
# Starts two private MariaDB servers from Debian's packages (each its own
# data directory, socket and no networking, under $WORK, as the mysql
# account): "production", filled with a generated database of about $SIZE_MB
# MiB (one InnoDB table of ~1 KiB rows, plus a small one), and "lab", empty.
# Then it times, each from the first byte read to the lab's server answering
# with the copy:
#
#   logical:  mariadb-dump --single-transaction --quick ... DB | mariadb DB
#             (what internal/sitecopy/dbcopy runs: Dump then Load)
#   physical: mariadb-backup --backup --stream=mbstream | mbstream -x,
#             mariadb-backup --prepare, the lab's server stopped,
#             mariadb-backup --copy-back into its emptied data directory,
#             the server started again
#
# and prints both times, their ratio and each copy's row count (they must
# equal production's). Not run by any test: generating 1 GiB takes minutes.
#
# Usage: bash bench/dbcopy.sh          (root; mariadb-server, mariadb-backup)
# Settings (environment): SIZE_MB (1024), WORK (a new directory under /tmp;
# removed at the end unless KEEP=1).
set -euo pipefail

SIZE_MB=${SIZE_MB:-1024}
WORK=${WORK:-$(mktemp -d /tmp/dbcopy-bench.XXXXXX)}
DB=benchdb
[ "$(id -u)" = 0 ] || { echo "bench/dbcopy.sh: run as root (it starts MariaDB servers as the mysql account)" >&2; exit 2; }
for p in mariadbd mariadb-install-db mariadb mariadb-dump mariadb-backup mbstream; do
	command -v "$p" >/dev/null || { echo "bench/dbcopy.sh: $p is missing; run: apt-get install -y mariadb-server mariadb-client mariadb-backup" >&2; exit 2; }
done
chmod 755 "$WORK"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ "${KEEP:-}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

# server NAME: writes its my.cnf, initialises its datadir.
server() {
	local d=$WORK/$1
	mkdir -p "$d/data" "$d/run" "$d/tmp"
	cat >"$d/my.cnf" <<EOF
[mysqld]
datadir = $d/data
socket = $d/run/mysqld.sock
pid-file = $d/run/mysqld.pid
log-error = $d/error.log
tmpdir = $d/tmp
skip-networking
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
innodb_buffer_pool_size = 256M
innodb_log_file_size = 256M
[client]
socket = $d/run/mysqld.sock
user = root
[mariadb-backup]
socket = $d/run/mysqld.sock
user = root
EOF
	chown -R mysql:mysql "$d"
	mariadb-install-db --defaults-file="$d/my.cnf" --user=mysql --skip-test-db >/dev/null
}

# start NAME: starts it and waits until it answers.
start() {
	local d=$WORK/$1
	mariadbd --defaults-file="$d/my.cnf" --user=mysql 2>>"$d/error.log" &
	pids+=($!)
	eval "pid_$1=$!"
	for _ in $(seq 600); do
		mariadb --defaults-file="$d/my.cnf" -e 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "bench/dbcopy.sh: $1's server did not start; see $d/error.log" >&2
	exit 1
}

stop() {
	local pid_var=pid_$1
	kill "${!pid_var}"
	while kill -0 "${!pid_var}" 2>/dev/null; do sleep 0.1; done
}

q() { mariadb --defaults-file="$WORK/$1/my.cnf" --batch --skip-column-names -e "$2"; }

now() { date +%s.%N; }

server prod
server lab
start prod
start lab

rows=$((SIZE_MB * 1024))
echo "generating $DB on production: $rows rows of ~1 KiB (~$SIZE_MB MiB)..."
t0=$(now)
q prod "CREATE DATABASE $DB CHARACTER SET utf8mb4;
CREATE TABLE $DB.posts (id INT PRIMARY KEY, title VARCHAR(100), body TEXT, created DATETIME, KEY (created)) ENGINE=InnoDB;
CREATE TABLE $DB.options (name VARCHAR(64) PRIMARY KEY, value BLOB) ENGINE=InnoDB;
USE $DB;
INSERT INTO $DB.options SELECT CONCAT('opt', seq), RANDOM_BYTES(200) FROM seq_1_to_1000;"
step=100000
for ((from = 1; from <= rows; from += step)); do
	to=$((from + step - 1)); [ $to -le $rows ] || to=$rows
	q prod "USE $DB; INSERT INTO $DB.posts SELECT seq, CONCAT('post ', seq), CONCAT_WS(' ', SHA2(seq, 512), SHA2(seq+1, 512), SHA2(seq+2, 512), SHA2(seq+3, 512), SHA2(seq+4, 512), SHA2(seq+5, 512), SHA2(seq+6, 512), SHA2(seq+7, 512)), NOW() - INTERVAL seq MINUTE FROM seq_${from}_to_${to};"
done
ondisk=$(du -sm "$WORK/prod/data/$DB" | cut -f1)
want=$(q prod "SELECT COUNT(*) FROM $DB.posts")
printf 'generated in %.0f s: %s rows, %s MiB on disk\n' "$(echo "$(now) - $t0" | bc)" "$want" "$ondisk"

# Logical: dump piped into the lab's client, as internal/sitecopy/dbcopy's Dump and Load.
t0=$(now)
q lab "CREATE DATABASE $DB CHARACTER SET utf8mb4"
mariadb-dump --defaults-file="$WORK/prod/my.cnf" --single-transaction --quick --routines --triggers --events \
	--hex-blob --no-tablespaces --skip-dump-date "$DB" |
	mariadb --defaults-file="$WORK/lab/my.cnf" --batch --sandbox "$DB"
logical=$(echo "$(now) - $t0" | bc)
got_l=$(q lab "SELECT COUNT(*) FROM $DB.posts")
printf 'logical  (dump | load):                         %8.1f s  rows %s\n' "$logical" "$got_l"

# Physical: streamed backup, prepare, copy-back into the lab's emptied datadir.
q lab "DROP DATABASE $DB"
t0=$(now)
mkdir "$WORK/backup"; chown mysql:mysql "$WORK/backup"
mariadb-backup --defaults-file="$WORK/prod/my.cnf" --backup --stream=mbstream --target-dir="$WORK/backup" 2>"$WORK/backup.log" |
	mbstream -x -C "$WORK/backup"
mariadb-backup --prepare --target-dir="$WORK/backup" 2>>"$WORK/backup.log"
stop lab
rm -rf "$WORK/lab/data"; mkdir "$WORK/lab/data"
mariadb-backup --defaults-file="$WORK/lab/my.cnf" --copy-back --target-dir="$WORK/backup" 2>>"$WORK/backup.log"
chown -R mysql:mysql "$WORK/lab/data"
start lab
physical=$(echo "$(now) - $t0" | bc)
got_p=$(q lab "SELECT COUNT(*) FROM $DB.posts")
printf 'physical (backup, prepare, copy-back, start): %8.1f s  rows %s\n' "$physical" "$got_p"
printf 'logical / physical: %.2f  (database: %s MiB on disk, %s rows)\n' "$(echo "$logical / $physical" | bc -l)" "$ondisk" "$want"
[ "$got_l" = "$want" ] && [ "$got_p" = "$want" ] || { echo "a copy's row count differs from production's ($want)" >&2; exit 1; }
