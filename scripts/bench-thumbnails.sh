#!/usr/bin/env bash
# Thumbnail benchmark: PhotoWall (photowall-thumbnail, what `photowall thumbnail` executes) beside
# vipsthumbnail, Pillow and the decode floor (djpeg), same run,
# same 256 box and JPEG quality 85, on ../shared/imagecorpus/photos/* plus a
# 24 MP JPEG made here by upscaling the Olympus photo with vips. Then HEIC and
# WebP: the 12 MP Olympus photo encoded here with heif-enc and cwebp (q85),
# beside vipsthumbnail (same libheif/libwebp) and heif-thumbnailer; and the peak
# RSS of each tool for a 48 MP HEIC (the Olympus photo upscaled 2x, 8064x6048).
#
#   scripts/bench-thumbnails.sh [PATH_TO_PHOTOWALL]
#
# PHOTOWALL_THUMBNAIL_ARGS adds options to PhotoWall's command line only,
# e.g. "--jpeg-scale-gap 2" for libvips' JPEG shrink-on-load (1/4 for a 12 MP photo;
# the floor column follows), "--reducing-gap 1.0" for a box pre-shrink down to the target.
#
# Peak RSS comes from GNU time (package time), which starts each command afresh.
# Needs: time, libvips-tools (vips, vipsthumbnail), heif-thumbnailer, libjpeg-turbo-progs (djpeg, the decode floor), libheif-examples
# (heif-enc), webp (cwebp), python3-venv. Pillow is pinned
# and installed into .build/venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${1:-${PHOTOWALL_BIN:-}}
CORPUS=${PHOTOWALL_CORPUS:-../shared/imagecorpus}
WORK=.build/bench-thumbnails
PILLOW_VERSION=13.0.0

if [ -z "$BIN" ]; then
  make release >&2
  BIN=.build/release/photowall
fi
# PhotoWall's thumbnails are made by photowall-thumbnail beside the photowall executable: what
# `photowall thumbnail` executes (and the same PhotoWallImaging code the server runs in process).
TOOL="$(dirname "$BIN")/photowall-thumbnail"
if ! "$TOOL" --help >/dev/null 2>&1; then
  echo "bench-thumbnails: $TOOL (beside $BIN) is missing or does not run" >&2
  exit 1
fi
for tool in vips vipsthumbnail vipsheader heif-thumbnailer heif-enc cwebp djpeg; do
  command -v "$tool" >/dev/null || { echo "bench-thumbnails: $tool not found (scripts/install-deps.sh bench)" >&2; exit 1; }
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

OLYMPUS="$CORPUS/photos/olympus_e-p3_4032x3024.jpg"
[ -s "$WORK/olympus_12mp.heic" ] || heif-enc -q 85 -p preset=ultrafast "$OLYMPUS" -o "$WORK/olympus_12mp.heic" >/dev/null
[ -s "$WORK/olympus_12mp.webp" ] || cwebp -quiet -q 85 "$OLYMPUS" -o "$WORK/olympus_12mp.webp"
if [ ! -s "$WORK/olympus_48mp.heic" ]; then
  vips resize "$OLYMPUS" "$WORK/olympus_48mp.png" 2
  heif-enc -q 85 -p preset=ultrafast "$WORK/olympus_48mp.png" -o "$WORK/olympus_48mp.heic" >/dev/null
  rm -f "$WORK/olympus_48mp.png"
fi

PY=.build/venv/bin/python
$PY scripts/bench_thumbnails.py --photowall "$TOOL" --work "$WORK" \
  --photowall-args "${PHOTOWALL_THUMBNAIL_ARGS:-}" --tools PhotoWall,vipsthumbnail,Pillow,djpeg-floor \
  "$CORPUS"/photos/*.jpg "$BIG"
echo
$PY scripts/bench_thumbnails.py --photowall "$TOOL" --work "$WORK" --title "HEIC thumbnails" \
  --tools PhotoWall,vipsthumbnail,heif-thumbnailer --batches 3 --runs 5 "$WORK/olympus_12mp.heic"
echo
$PY scripts/bench_thumbnails.py --photowall "$TOOL" --work "$WORK" --title "WebP thumbnails" \
  --tools PhotoWall,vipsthumbnail,Pillow --batches 3 --runs 5 "$WORK/olympus_12mp.webp"
echo
echo "## \`photowall thumbnail\` (photowall executing photowall-thumbnail; the peak includes photowall's own start, about 25 MiB of libraries)"
echo
rss=$(/usr/bin/time -f %M "$BIN" thumbnail "$OLYMPUS" "$WORK/out_cli.jpg" --size 256 --quality 85 2>&1 >/dev/null | tail -1)
echo "olympus 12 MP, one thumbnail: peak RSS $((rss / 1024)) MiB"
echo
echo "## Peak RSS for a 48 MP HEIC (8064x6048, one process, one thumbnail; MiB)"
echo
echo "| tool | wall ms | peak RSS MiB |"
echo "|---|---|---|"
for t in PhotoWall vipsthumbnail heif-thumbnailer; do
  case $t in
    PhotoWall) cmd=("$TOOL" "$WORK/olympus_48mp.heic" "$WORK/out48.jpg" --size 256) ;;
    vipsthumbnail) cmd=(vipsthumbnail --size 256 -o "$WORK/vips48.jpg[Q=85]" "$WORK/olympus_48mp.heic") ;;
    heif-thumbnailer) cmd=(heif-thumbnailer -s 256 "$WORK/olympus_48mp.heic" "$WORK/heif48.png") ;;
  esac
  $PY - "${cmd[@]}" <<'PY'
import os, subprocess, sys, tempfile, time
# Peak RSS from GNU time: a child of this Python process starts in its address space (vfork), which
# Linux counts in the child's ru_maxrss.
report = tempfile.NamedTemporaryFile(delete=False).name
start = time.perf_counter()
proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", report] + sys.argv[1:],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, _ = os.wait4(proc.pid, 0)
wall = (time.perf_counter() - start) * 1000
rss = int(open(report).read().split()[-1]) / 1024
os.unlink(report)
name = os.path.basename(sys.argv[1])
ok = "" if os.waitstatus_to_exitcode(status) == 0 else " (failed)"
print(f"| {name}{ok} | {wall:.0f} | {rss:.1f} |")
PY
done
