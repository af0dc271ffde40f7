#!/usr/bin/env bash
# Thumbnail benchmark: PhotoWall beside vipsthumbnail and Pillow, same run,
# same 256 box and JPEG quality 85, on ../shared/imagecorpus/photos/* plus a
# 24 MP JPEG made here by upscaling the Olympus photo with vips.
#
#   scripts/bench-thumbnails.sh [PATH_TO_PHOTOWALL]
#
# PHOTOWALL_THUMBNAIL_ARGS adds options to PhotoWall's command line only,
# e.g. "--reducing-gap 1.0" to see Pillow-style 1/8 shrink-on-load.
#
# Needs: libvips-tools (vips, vipsthumbnail), python3-venv. Pillow is pinned
# and installed into .build/venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${1:-${PHOTOWALL_BIN:-}}
CORPUS=${PHOTOWALL_CORPUS:-../shared/imagecorpus}
WORK=.build/bench-thumbnails
PILLOW_VERSION=13.0.0

if [ -z "$BIN" ]; then
  swift build -c release --product photowall >&2
  BIN=.build/release/photowall
fi
if ! "$BIN" thumbnail --help >/dev/null 2>&1; then
  echo "bench-thumbnails: $BIN has no working 'thumbnail' command" >&2
  exit 1
fi
for tool in vips vipsthumbnail; do
  command -v "$tool" >/dev/null || { echo "bench-thumbnails: $tool not found (apt-get install libvips-tools)" >&2; exit 1; }
done
if ! .build/venv/bin/python -c "import PIL, sys; sys.exit(PIL.__version__ != '$PILLOW_VERSION')" 2>/dev/null; then
  python3 -m venv .build/venv
  .build/venv/bin/pip install --quiet "pillow==$PILLOW_VERSION"
fi

mkdir -p "$WORK"
BIG="$WORK/synthetic_6000x4000_q90.jpg"
if [ ! -s "$BIG" ]; then
  # Olympus 4032x3024 cropped to 3:2 (4032x2688), then resized to 6000x4000 at Q90.
  vips crop "$CORPUS/photos/olympus_e-p3_4032x3024.jpg" "$WORK/crop.v" 0 168 4032 2688
  vips resize "$WORK/crop.v" "$BIG[Q=90]" 1.4880952380952381
  rm -f "$WORK/crop.v"
fi

exec .build/venv/bin/python scripts/bench_thumbnails.py --photowall "$BIN" --work "$WORK" \
  --photowall-args "${PHOTOWALL_THUMBNAIL_ARGS:-}" \
  "$CORPUS"/photos/*.jpg "$BIG"
