#!/usr/bin/env bash
# `make bench`: every benchmark table, PhotoWall beside its peer in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/photowall}
python3 scripts/bench_api.py "$BIN"
python3 scripts/bench_feed.py "$BIN"
# The large wall (opt-in, issue 14): 4M images, 400k users, SQLite; BENCH_FEED_LARGE_DATA=DIR keeps its seed for reuse.
if [ "${BENCH_FEED_LARGE:-0}" = 1 ]; then
    BENCH_FEED_IMAGES=4000000 BENCH_FEED_USERS=400000 BENCH_FEED_DATA=${BENCH_FEED_LARGE_DATA:-} python3 scripts/bench_feed.py "$BIN"
fi
python3 scripts/bench_mixed.py "$BIN"
python3 scripts/bench_uploads.py "$BIN"
python3 scripts/bench_s3.py "$BIN"
python3 scripts/bench_flood.py "$BIN"
# The live wall: anonymous and distinct viewers of a plain class, and the live friend feed itself (`wall`).
BENCH_LIVE_MODES=${BENCH_LIVE_MODES:-anonymous,distinct,wall} python3 scripts/bench_live.py "$BIN"
if [ -x scripts/bench-thumbnails.sh ]; then scripts/bench-thumbnails.sh "$BIN"; fi
