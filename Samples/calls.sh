#!/usr/bin/env bash
# Example client calls against a local PhotoWall (`make run`), step by step as the Parse photo-wall app does.
# Usage: Samples/calls.sh [BASE_URL] [PHOTO]
set -euo pipefail
BASE=${1:-http://127.0.0.1:1337/parse}
PHOTO=${2:-}
APP=${PARSE_SERVER_APPLICATION_ID:-photowall}
j() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

user="demo_$RANDOM"
token=$(curl -sS -H "X-Parse-Application-Id: $APP" -H 'Content-Type: application/json' \
  -d "{\"username\":\"$user\",\"password\":\"demo-password\"}" "$BASE/users" | j '["sessionToken"]')
userId=$(curl -sS -H "X-Parse-Application-Id: $APP" -H "X-Parse-Session-Token: $token" "$BASE/users/me" | j '["objectId"]')
echo "signed up $user ($userId)"

PHOTO=${PHOTO:-$(dirname "$0")/photos/landscape_o1.jpg}
file=$(curl -sS -H "X-Parse-Application-Id: $APP" -H "X-Parse-Session-Token: $token" -H 'Content-Type: image/jpeg' \
  --data-binary @"$PHOTO" "$BASE/files/photo.jpg" | j '["name"]')
echo "uploaded $file"

image=$(curl -sS -H "X-Parse-Application-Id: $APP" -H "X-Parse-Session-Token: $token" -H 'Content-Type: application/json' \
  -d "{\"image\":{\"__type\":\"File\",\"name\":\"$file\"}}" \
  "$BASE/classes/WallImage" | j '["objectId"]')
curl -sS -H "X-Parse-Application-Id: $APP" -H "X-Parse-Session-Token: $token" -H 'Content-Type: application/json' \
  -d "{\"comment\":\"First!\",\"imageObjectId\":\"$image\"}" "$BASE/classes/WallImageComment" >/dev/null
echo "posted WallImage $image with a comment"

curl -sS -G -H "X-Parse-Application-Id: $APP" -H "X-Parse-Session-Token: $token" \
  --data-urlencode "where={\"userFBId\":{\"\$in\":[\"$userId\"]}}" -d order=-createdAt -d include=user -d limit=5 \
  "$BASE/classes/WallImage"; echo
