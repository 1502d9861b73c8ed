#!/usr/bin/env python3
"""Checks a screenshot of infer-bench's HTML report: the expected size, not blank, and the
colour of every chart series drawn in it. Needs only Python's standard library: the PNG is
decoded here (zlib and the five scanline filters), so that the check runs where PIL is absent.

usage: png_check.py SCREENSHOT.png REPORT.html --width W --height H
Exit status 0 when every check passes, 1 otherwise, with what failed on stderr."""
import argparse
import collections
import re
import struct
import sys
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit only here)


def read_chunks(data):
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG file")
    at = len(PNG_SIGNATURE)
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind, data[at + 8:at + 8 + length]
        at += 12 + length


def paeth(left, up, up_left):
    estimate = left + up - up_left
    to_left, to_up, to_up_left = abs(estimate - left), abs(estimate - up), abs(estimate - up_left)
    if to_left <= to_up and to_left <= to_up_left:
        return left
    return up if to_up <= to_up_left else up_left


def unfilter(filter_type, line, previous, bpp):
    """Undoes one scanline's filter (PNG spec, section 9) in place."""
    if filter_type == 0:
        return
    if filter_type == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif filter_type == 2:
        for i in range(len(line)):
            line[i] = (line[i] + previous[i]) & 0xFF
    elif filter_type == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
    elif filter_type == 4:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            up_left = previous[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + paeth(left, previous[i], up_left)) & 0xFF
    else:
        raise ValueError(f"unknown PNG filter type {filter_type}")


def decode_png(path):
    """(width, height, channels, rows): rows as bytearrays of 8-bit samples, unfiltered."""
    header, compressed = None, bytearray()
    with open(path, "rb") as f:
        data = f.read()
    for kind, body in read_chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in CHANNELS or interlace != 0:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour_type}, interlace {interlace}")
    channels = CHANNELS[colour_type]
    raw = zlib.decompress(bytes(compressed))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        unfilter(raw[start], line, previous, channels)
        rows.append(line)
        previous = line
    return width, height, channels, rows


def colour_histogram(channels, rows):
    """How many pixels have each (r, g, b)."""
    histogram = collections.Counter()
    for line in rows:
        if channels >= 3:
            histogram.update(zip(line[0::channels], line[1::channels], line[2::channels]))
        else:
            histogram.update((v, v, v) for v in line[0::channels])
    return histogram


def series_colours(html):
    """The stroke colour of every chart series (<polyline class="series" ... stroke="#rrggbb">)."""
    colours = set()
    for polyline in re.findall(r"<polyline[^>]*>", html):
        if 'class="series"' in polyline:
            found = re.search(r'stroke="#([0-9a-fA-F]{6})"', polyline)
            if found:
                colours.add(tuple(int(found.group(1)[i:i + 2], 16) for i in (0, 2, 4)))
    return colours


def pixels_near(histogram, colour, tolerance=3):
    return sum(count for rgb, count in histogram.items()
               if all(abs(a - b) <= tolerance for a, b in zip(rgb, colour)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("png")
    parser.add_argument("html")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    # A series drawn in two charts leaves markers (about 40 pixels each) and lines: far more
    # than the few pixels its legend swatches alone would give.
    parser.add_argument("--min-series-pixels", type=int, default=300)
    parser.add_argument("--min-colours", type=int, default=64)
    args = parser.parse_args()

    width, height, channels, rows = decode_png(args.png)
    failures = []
    if (width, height) != (args.width, args.height):
        failures.append(f"size {width}x{height}, expected {args.width}x{args.height}")
    histogram = colour_histogram(channels, rows)
    if len(histogram) < args.min_colours:
        failures.append(f"only {len(histogram)} distinct colours: the page looks blank")
    with open(args.html, encoding="utf-8") as f:
        expected = series_colours(f.read())
    if not expected:
        failures.append("the report has no chart series to look for")
    for colour in sorted(expected):
        found = pixels_near(histogram, colour)
        name = "#%02x%02x%02x" % colour
        print(f"png_check: series colour {name}: {found} pixels")
        if found < args.min_series_pixels:
            failures.append(f"series colour {name} covers {found} pixels, fewer than {args.min_series_pixels}: "
                            "its chart lines were not drawn")
    print(f"png_check: {width}x{height}, {len(histogram)} distinct colours, {len(expected)} series colours")
    for failure in failures:
        print(f"png_check: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
