#!/usr/bin/env python3
"""Times thumbnailers the same way: whole processes, wall and CPU clock, peak RSS.

In-process cost per image = (T(20 images in one process) - T(1 image)) / 19,
which removes start-up for every tool alike. Peak RSS is that of the 20-image
process, as GNU time reports it (see run). One process per image: median of RUNS single-image processes.
Each batch runs the tools interleaved, so machine noise hits them alike; the
table shows the median over batches.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

RSS_DIR = tempfile.mkdtemp(prefix="bench-rss-")

PILLOW_LOOP = r"""
import sys
from PIL import Image
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(n):
    im = Image.open(src)
    im.draft("RGB", (256, 256))
    im.thumbnail((256, 256))
    im.save(dst, quality=85)
"""


def run(cmd):
    """Runs cmd under GNU time; returns (wall ms, cpu ms, max RSS MiB).

    The peak RSS is GNU time's report, not this process's wait4: Python starts a child with vfork
    (or fork), in this interpreter's address space, and Linux counts that (about 13 MiB) in the
    child's ru_maxrss, a floor under every tool. time, a small process, starts the command afresh.
    """
    report = os.path.join(RSS_DIR, "rss")
    start = time.perf_counter()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", report] + cmd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{err}")
    with open(report) as f:
        rss_kib = int(f.read().split()[-1])
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, rss_kib / 1024


def commands(tool, image, n, work, photowall, extra):
    out = os.path.join(work, f"out_{tool}.jpg")
    if tool == "PhotoWall":
        return [photowall, image, out, "--size", "256", "--quality", "85", "--repeat", str(n)] + extra
    if tool == "vipsthumbnail":
        # n distinct names (symlinks): vips' operation cache would otherwise load a repeated WebP only once.
        names = []
        for i in range(n):
            link = os.path.join(work, f"in{i}_{os.path.basename(image)}")
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(os.path.abspath(image), link)
            names.append(link)
        return ["vipsthumbnail", "--size", "256", "-o", os.path.join(work, "vips_%s.jpg[Q=85]")] + names
    if tool == "djpeg-floor":
        # The decode floor: libjpeg-turbo alone (Debian's djpeg, the library PhotoWall links) decoding the same
        # file at the DCT scale PhotoWall picks, to RGB, output discarded. n images cost n processes (~1 ms each).
        scale = f"1/{jpeg_scale_denominator(image, extra)}"
        return ["sh", "-c", 'i=0; while [ $i -lt "$3" ]; do djpeg -scale "$2" -dct int -rgb -outfile /dev/null "$1" '
                '|| exit 1; i=$((i+1)); done', "sh", image, scale, str(n)]
    if tool == "heif-thumbnailer":
        # One file per process by design: n images cost n processes (start-up included), PNG output.
        png = os.path.join(work, "out_heif-thumbnailer.png")
        return ["sh", "-c", 'i=0; while [ $i -lt "$3" ]; do heif-thumbnailer -s 256 "$1" "$2" || exit 1; i=$((i+1)); done',
                "sh", image, png, str(n)]
    return [sys.executable, "-c", PILLOW_LOOP, image, out, str(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photowall", required=True, help="the photowall-thumbnail executable")
    ap.add_argument("--work", required=True)
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--photowall-args", default="")
    ap.add_argument("--tools", default="PhotoWall,vipsthumbnail,Pillow",
                    help="comma list of PhotoWall, vipsthumbnail, Pillow, djpeg-floor, heif-thumbnailer (first is compared)")
    ap.add_argument("--title", default="")
    ap.add_argument("images", nargs="+")
    a = ap.parse_args()
    extra = a.photowall_args.split()
    tools = a.tools.split(",")
    import PIL
    print(f"# {a.title or 'Thumbnails'} to a 256 box, JPEG Q85 (Pillow {PIL.__version__}: draft + thumbnail; "
          f"vipsthumbnail {subprocess.run(['vips', '--version'], capture_output=True, text=True).stdout.strip()})")
    if "heif-thumbnailer" in tools:
        print("heif-thumbnailer (libheif 1.15, PNG output) takes one file per process: its in-process column is a "
              "whole process per image.")
    print(f"PhotoWall: {os.path.basename(a.photowall)} (what `photowall thumbnail` executes; links only "
          "PhotoWallImaging and the image libraries).")
    if extra:
        print(f"PhotoWall options: {' '.join(extra)}")
    print()
    print("## In process (20 images per process; ms per image = (T20 - T1) / 19, median of "
          f"{a.batches} interleaved batches; CPU = user+sys; RSS = peak of the 20-image process)")
    print()
    others = tools[1:]
    goals = {"Pillow": "≤ 0.9", "djpeg-floor": "≤ 1.3"}
    rss_goal = "Pillow" in tools and "djpeg-floor" in tools
    if "djpeg-floor" in tools:
        print("djpeg-floor: `djpeg -scale 1/N -rgb` (Debian libjpeg-turbo, as linked by PhotoWall) at the DCT scale "
              "PhotoWall picks (column N), one process per image (about 1 ms of start-up each).")
    if rss_goal:
        print("goals: in process ≤ 0.9× Pillow on every image; ≤ 1.3× the decode floor; peak RSS ≤ Pillow's + 4 MiB")
    print()
    print("| image | MP | " + ("N | " if "djpeg-floor" in tools else "")
          + " | ".join(f"{t} wall ms / CPU ms / MiB" for t in tools) + " | "
          + " | ".join(f"PhotoWall ÷ {t}" + (f" (goal {goals[t]})" if t in goals else "") for t in others)
          + (" | PhotoWall − Pillow MiB (goal ≤ 4)" if rss_goal else "") + " |")
    print("|---|---|" + ("---|" if "djpeg-floor" in tools else "")
          + "---|" * (len(tools) + len(others) + (1 if rss_goal else 0)))
    single = {}
    for image in a.images:
        res = {t: {"wall": [], "cpu": [], "rss": []} for t in tools}
        singles = {t: {"wall": [], "rss": []} for t in tools}
        for _ in range(a.batches):
            for t in tools:
                w1, c1, r1 = run(commands(t, image, 1, a.work, a.photowall, extra))
                w20, c20, r20 = run(commands(t, image, 20, a.work, a.photowall, extra))
                res[t]["wall"].append((w20 - w1) / 19)
                res[t]["cpu"].append((c20 - c1) / 19)
                res[t]["rss"].append(r20)
                singles[t]["wall"].append(w1)
                singles[t]["rss"].append(r1)
        for _ in range(max(0, a.runs - a.batches)):
            for t in tools:
                w1, _, r1 = run(commands(t, image, 1, a.work, a.photowall, extra))
                singles[t]["wall"].append(w1)
                singles[t]["rss"].append(r1)
        med = {t: {k: statistics.median(v) for k, v in res[t].items()} for t in tools}
        single[image] = {t: {k: statistics.median(v) for k, v in singles[t].items()} for t in tools}
        mp = megapixels(image)
        cells = " | ".join(f"{med[t]['wall']:.1f} / {med[t]['cpu']:.1f} / {med[t]['rss']:.1f}" for t in tools)
        ratios = " | ".join(f"{med['PhotoWall']['wall'] / med[t]['wall']:.2f}" for t in others)
        scale = f"{jpeg_scale_denominator(image, extra)} | " if "djpeg-floor" in tools else ""
        rss = f" | {med['PhotoWall']['rss'] - med['Pillow']['rss']:+.1f}" if rss_goal else ""
        print(f"| {os.path.basename(image)} | {mp:.1f} | {scale}{cells} | {ratios}{rss} |", flush=True)
    print()
    print(f"## One process per image (median of {a.runs} runs; wall ms / peak RSS MiB, start-up included)")
    print()
    print("| image | " + " | ".join(tools) + " |")
    print("|---|" + "---|" * len(tools))
    for image in a.images:
        s = single[image]
        print(f"| {os.path.basename(image)} | " + " | ".join(f"{s[t]['wall']:.0f} / {s[t]['rss']:.1f}" for t in tools) + " |")


def jpeg_scale_denominator(path, extra, box=256):
    """The DCT scale PhotoWall's JPEGDecoder picks for a `box` thumbnail (ThumbnailOptions.jpegScaleGap:
    1.25, or --jpeg-scale-gap G in the PhotoWall options)."""
    w, h = size(path)
    gap = float(extra[extra.index("--jpeg-scale-gap") + 1]) if "--jpeg-scale-gap" in extra else 1.25
    if max(w, h) <= box:
        tw, th = w, h
    elif w >= h:
        tw, th = box, min(max(int(h * box / w + 0.5), 1), box)
    else:
        tw, th = min(max(int(w * box / h + 0.5), 1), box), box
    for d in (8, 4, 2):
        if w / d >= gap * tw and h / d >= gap * th:
            return d
    return 1


def size(path):
    return [int(subprocess.run(["vipsheader", "-f", f, path], capture_output=True, text=True, check=True).stdout)
            for f in ("width", "height")]


def megapixels(path):
    w, h = size(path)
    return w * h / 1e6


if __name__ == "__main__":
    main()
