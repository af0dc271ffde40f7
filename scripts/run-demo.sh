#!/usr/bin/env bash
# `make run`: the mock Facebook provider on :1338 (PHOTOWALL_FACEBOOK_PORT) and PhotoWall on :1337
# (`make run ARGS='--port N'` or PORT) with the embedded defaults
# (SQLite + Storage/). The first run loads a small demo wall: the fixture's people and friendships
# (Samples/facebook/users.json) with photos from Samples/photos, so a newcomer sees a populated wall.
#
# The servers log warnings only (ARGS='--log-level info' shows every request); their start-up text goes
# to DATA/demo.log, and the banner (the wall's URL, how to log in, where the data lives) comes last.
# Whatever the demo starts stops on every exit path: Ctrl-C, an error, or this script being killed
# (both servers read a FIFO that only this script holds open, with --stop-on-stdin-eof).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/photowall}
shift || true
DATA=${PHOTOWALL_DATA_DIR:-Storage}
APP_ID=${PHOTOWALL_FACEBOOK_APP_ID:-1234567890123456}
APP_SECRET=${PHOTOWALL_FACEBOOK_APP_SECRET:-photowall-dev-secret}
FB_PORT=${PHOTOWALL_FACEBOOK_PORT:-1338}
# The wall's port: `make run ARGS='--port N'`, else PORT / PARSE_SERVER_PORT, else 1337.
PORT=${PORT:-${PARSE_SERVER_PORT:-1337}}
LOG_LEVEL=warning
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --port) PORT=${args[$((i + 1))]:-$PORT} ;;
    --port=*) PORT=${args[$i]#--port=} ;;
    --log-level) LOG_LEVEL=${args[$((i + 1))]:-$LOG_LEVEL} ;;
    --log-level=*) LOG_LEVEL=${args[$i]#--log-level=} ;;
  esac
done

# Something already listening on 127.0.0.1:$1?
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if port_busy "$PORT"; then
  echo "make run: port $PORT is busy (something, perhaps another make run, listens on 127.0.0.1:$PORT)." >&2
  echo "          Stop it, or choose another port: make run ARGS='--port 8080'" >&2
  exit 1
fi
if port_busy "$FB_PORT"; then
  echo "make run: port $FB_PORT (the mock Facebook provider) is busy." >&2
  echo "          Stop what listens there, or choose another port: PHOTOWALL_FACEBOOK_PORT=8081 make run" >&2
  exit 1
fi

mkdir -p "$DATA"
if [ ! -s "$DATA/photowall.sqlite" ]; then
  echo "loading the demo wall into $DATA/ (first run) …"
  # Varied pictures (subjects, times of day, seasons, frames, EXIF orientations), rendered, not copied.
  "$BIN" samples "$DATA/demo-photos" --scenes 60 > /dev/null
  "$BIN" seed-demo --data-dir "$DATA" --fixture Samples/facebook/users.json --photos "$DATA/demo-photos" --images 240 --comments-per-image 2
fi
LOG="$DATA/demo.log"

ALIVE="$DATA/.demo-alive"   # the FIFO (left by a killed run at worst, and replaced by the next)
pids=()
cleanup() {
  trap - EXIT INT TERM
  exec 3>&- 2>/dev/null || true                 # EOF on the FIFO: both servers stop gracefully
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$ALIVE"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -f "$ALIVE"
mkfifo "$ALIVE"
echo "--- $(date -u +%FT%TZ) make run" >> "$LOG"
"$BIN" mock-facebook --port "$FB_PORT" --app-id "$APP_ID" --app-secret "$APP_SECRET" --no-appsecret-proof \
  --log-level "$LOG_LEVEL" --stop-on-stdin-eof < "$ALIVE" >> "$LOG" &
pids+=($!)
"$BIN" serve --data-dir "$DATA" --facebook-url "http://127.0.0.1:$FB_PORT/v19.0" --facebook-app-id "$APP_ID" \
  --facebook-app-secret "$APP_SECRET" --port "$PORT" --log-level warning --stop-on-stdin-eof "$@" < "$ALIVE" >> "$LOG" &
pids+=($!)
exec 3> "$ALIVE"   # held by this script alone: when it ends, however it ends, the servers read EOF

# Wait until both listen (or one of them gave up, e.g. a port taken meanwhile).
for _ in $(seq 1 300); do
  port_busy "$PORT" && port_busy "$FB_PORT" && break
  for p in "${pids[@]}"; do
    if ! kill -0 "$p" 2>/dev/null; then
      echo "make run: a server did not start (see the messages above and $LOG)." >&2
      exit 1
    fi
  done
  sleep 0.1
done

LOGIN_ARGS=""
[ "$PORT" = 1337 ] || LOGIN_ARGS+=" --server http://127.0.0.1:$PORT/parse"
cat <<MSG

PhotoWall demo is running. Ctrl-C stops it.

  The wall      http://127.0.0.1:$PORT/
                "Log in with Facebook", then pick one of the 60 fixture people in the mock dialog.
  From the CLI  $BIN login --facebook --as "Jonah Lindqvist"$LOGIN_ARGS
                $BIN feed
                $BIN upload Samples/photos/landscape_o6.jpg --comment "Hello wall"
  Data          $DATA/ (photowall.sqlite, the photos, demo-photos/ they came from); delete it for a fresh demo wall.
  Logs          warnings only; every request: make run ARGS='--log-level info'. Start-up details: $LOG
  Mock Facebook http://127.0.0.1:$FB_PORT/ (app id $APP_ID; PHOTOWALL_FACEBOOK_PORT picks another port)

MSG
# Until Ctrl-C, or until either server stops (the other is then stopped too).
wait -n "${pids[@]}"
