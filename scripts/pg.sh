#!/usr/bin/env bash
# A throw-away PostgreSQL 15 on 127.0.0.1 for tests: temporary data, random free port, fsync off.
# Usage: scripts/pg.sh start   prints `export PGPORT=… PGDATA=… PHOTOWALL_TEST_DATABASE=…` on stdout
#        scripts/pg.sh stop    stops it and removes its data (safe to repeat)
# State lives in .build/pg.state. As root (CI), initdb and pg_ctl run as 'postgres' via runuser,
# since initdb refuses to run as root. Installs postgresql-15 and libpq-dev when missing.
# Source: shared/notes/http-and-infra.md §7.
set -euo pipefail
cd "$(dirname "$0")/.."
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
STATE=.build/pg.state

as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 30000))
}

start() {
  if [ ! -x "$PGBIN/initdb" ] || [ ! -e /usr/include/postgresql/libpq-fe.h ]; then
    echo "pg.sh: installing postgresql-15 libpq-dev" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql-15 libpq-dev >/dev/null
  fi
  [ -x "$PGBIN/initdb" ] || { echo "pg.sh: $PGBIN/initdb not found" >&2; return 1; }
  if [ -s "$STATE" ]; then
    # shellcheck disable=SC1090
    . "$STATE"
    if as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then cat "$STATE"; return 0; fi
    rm -rf "$PGDATA"
  fi
  PGDATA=$(mktemp -d /tmp/photowall-pg.XXXXXX)
  PGPORT=$(free_port)
  mkdir -p .build
  cat > "$STATE" <<STATE
export PGDATA=$PGDATA PGPORT=$PGPORT PGHOST=127.0.0.1 PGUSER=postgres
export PHOTOWALL_TEST_DATABASE=postgres://postgres@127.0.0.1:$PGPORT/postgres
STATE
  # Written before initdb, so `stop` also removes the data of a start that failed half-way.
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$PGDATA"; fi
  chmod 700 "$PGDATA"
  # C collation: text order is byte order, as in SQLite.
  as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
  as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 start \
    -o "-p $PGPORT -c listen_addresses=127.0.0.1 -k $PGDATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >/dev/null \
    || { cat "$PGDATA/server.log" >&2; return 1; }
  cat "$STATE"
}

stop() {
  [ -s "$STATE" ] || return 0
  # shellcheck disable=SC1090
  . "$STATE"
  if [ -s "$PGDATA/postmaster.pid" ]; then as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null || true; fi
  case "$PGDATA" in /tmp/photowall-pg.*) rm -rf "$PGDATA" ;; esac
  rm -f "$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: scripts/pg.sh start|stop" >&2; exit 64 ;;
esac
