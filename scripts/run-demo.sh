#!/usr/bin/env bash
# `make run`: the mock Facebook provider on :1338 (PHOTOWALL_FACEBOOK_PORT) and PhotoWall on :1337
# (`make run ARGS='--port N'` or PORT) with the embedded defaults
# (SQLite + Storage/). The first run loads a small demo wall: the fixture's people and friendships
# (Samples/facebook/users.json) with photos from Samples/photos, so a newcomer sees a populated wall.
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
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --port) PORT=${args[$((i + 1))]:-$PORT} ;;
    --port=*) PORT=${args[$i]#--port=} ;;
  esac
done

if [ ! -s "$DATA/photowall.sqlite" ]; then
  echo "loading the demo wall into $DATA/ (first run) …"
  "$BIN" seed-demo --data-dir "$DATA" --fixture Samples/facebook/users.json --photos Samples/photos --images 240 --comments-per-image 2
fi

"$BIN" mock-facebook --port "$FB_PORT" --app-id "$APP_ID" --app-secret "$APP_SECRET" --no-appsecret-proof --log-level warning --stop-on-stdin-eof \
  < <(while sleep 3600; do :; done) &
FB_PID=$!
trap 'kill $FB_PID 2>/dev/null || true' EXIT INT TERM
sleep 0.5

LOGIN_ARGS=""
[ "$PORT" = 1337 ] || LOGIN_ARGS+=" --server http://127.0.0.1:$PORT/parse"
[ "$FB_PORT" = 1338 ] || LOGIN_ARGS+=" --facebook-url http://127.0.0.1:$FB_PORT"
cat <<MSG

The wall in a browser: http://127.0.0.1:$PORT/  (Log in with Facebook → pick a fixture person in the mock dialog)

Log in from the command line (as a fixture user, or without --as through the dialog in a browser):
  $BIN login --facebook --as 100001367487298$LOGIN_ARGS
  $BIN feed
  $BIN upload Samples/photos/landscape_o6.jpg --comment "Hello wall"
Or over REST (no browser needed):
  TOKEN=\$(curl -s -X POST -d user_id=100001367487298 http://127.0.0.1:$FB_PORT/__control/login | python3 -c 'import json,sys;print(json.load(sys.stdin)["access_token"])')
  curl -s -H 'X-Parse-Application-Id: photowall' -d "{\"authData\":{\"facebook\":{\"id\":\"100001367487298\",\"access_token\":\"\$TOKEN\"}}}" http://127.0.0.1:$PORT/parse/users
  curl -s -X POST -H 'X-Parse-Application-Id: photowall' -H 'X-Parse-Session-Token: r:…' -d '{"limit":5}' http://127.0.0.1:$PORT/parse/functions/feed
The Facebook login dialog: http://127.0.0.1:$FB_PORT/v19.0/dialog/oauth?client_id=$APP_ID&redirect_uri=http://127.0.0.1:$PORT/&state=x

MSG
"$BIN" serve --data-dir "$DATA" --facebook-url "http://127.0.0.1:$FB_PORT/v19.0" --facebook-app-id "$APP_ID" \
  --facebook-app-secret "$APP_SECRET" --port "$PORT" "$@"
