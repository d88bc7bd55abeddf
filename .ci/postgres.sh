#!/usr/bin/env bash
# .ci/postgres.sh — a throwaway PostgreSQL 15 for CI and local runs.
#
#   .ci/postgres.sh start DIR   initdb into DIR/data, start the server listening
#                               only on a Unix socket in DIR (no TCP port), create
#                               the database "mnemo", print its connection URL
#   .ci/postgres.sh stop DIR    stop that server (DIR is left for the caller to remove)
#
# Uses Debian's postgresql-15 binaries in /usr/lib/postgresql/15/bin; installs
# nothing. Run as root, the server runs as the postgres user (PostgreSQL refuses
# root) and DIR is handed to that user. Typical use:
#
#   PGDIR=$(mktemp -d) && trap '.ci/postgres.sh stop "$PGDIR"; rm -rf "$PGDIR"' EXIT
#   export MNEMO_TEST_POSTGRES_URL=$(.ci/postgres.sh start "$PGDIR")
set -euo pipefail

BIN=/usr/lib/postgresql/15/bin
SUPERUSER=mnemo
DB=mnemo

usage() {
	echo "usage: $0 start DIR | stop DIR" >&2
	exit 2
}

[[ $# -eq 2 ]] || usage
cmd=$1
dir=$2

if [[ ! -x $BIN/pg_ctl || ! -x $BIN/initdb ]]; then
	echo "postgres.sh: no PostgreSQL 15 in $BIN; install it with: apt-get install -y postgresql-15" >&2
	exit 1
fi

# as_pg CMD... runs a PostgreSQL binary as the postgres user when we are root.
as_pg() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case $cmd in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# A Unix socket path is limited to about 107 bytes.
	if ((${#dir} > 90)); then
		echo "postgres.sh: $dir is too long for a Unix socket path; use a shorter directory" >&2
		exit 1
	fi
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$dir"
	fi
	as_pg "$BIN/initdb" -D "$dir/data" -U "$SUPERUSER" --auth=trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	# pg_ctl waits up to a day: a loaded machine starts late, and CI's time-out
	# bounds a hang.
	as_pg "$BIN/pg_ctl" start -w -t 86400 -D "$dir/data" -l "$dir/log" \
		-o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=300" >/dev/null ||
		{ cat "$dir/log" >&2; exit 1; }
	as_pg "$BIN/psql" -h "$dir" -U "$SUPERUSER" -d postgres -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" >/dev/null
	# The socket directory goes in the query, percent-encoded.
	enc=$(printf '%s' "$dir" | sed -e 's/%/%25/g' -e 's#/#%2F#g' -e 's/ /%20/g')
	echo "postgres://$SUPERUSER@/$DB?host=$enc&sslmode=disable"
	;;
stop)
	if [[ -f $dir/data/postmaster.pid ]]; then
		as_pg "$BIN/pg_ctl" stop -w -t 86400 -m fast -D "$dir/data" >/dev/null
	fi
	;;
*)
	usage
	;;
esac
