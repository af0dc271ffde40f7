#!/usr/bin/env bash
# `make bench`: every benchmark table, PhotoWall beside its peer in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/photowall}
python3 scripts/bench_api.py "$BIN"
python3 scripts/bench_feed.py "$BIN"
python3 scripts/bench_mixed.py "$BIN"
python3 scripts/bench_uploads.py "$BIN"
python3 scripts/bench_s3.py "$BIN"
python3 scripts/bench_flood.py "$BIN"
python3 scripts/bench_live.py "$BIN"
if [ -x scripts/bench-thumbnails.sh ]; then scripts/bench-thumbnails.sh "$BIN"; fi
