#!/usr/bin/python3
"""Writes the PNG test images of tests/data/images/ (README.md there says
what each holds) with zlib alone, no PNG library, so that decoding them is
checked against pixels defined here rather than against another decoder:

    /usr/bin/python3 scripts/make_test_pngs.py tests/data/images

Also derives huge_dims.jpg from blocks_gray.jpg (scripts/make_test_jpegs.c)
by rewriting the dimensions in its frame header."""
import struct
import sys
import zlib

GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6
CHANNELS = {GRAY: 1, RGB: 3, PALETTE: 1, GRAY_ALPHA: 2, RGBA: 4}


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def pack_row(samples, depth):
    """One scanline's bytes: samples of `depth` bits, big-endian, packed."""
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def png(color_type, depth, rows, extra=b"", interlace=False):
    """rows: a list of rows, each a list of pixels, each a tuple of samples."""
    height, width = len(rows), len(rows[0])
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 1 if interlace else 0)
    raw = bytearray()
    for sub in (adam7(rows) if interlace else [rows]):
        for row in sub:
            raw.append(0)  # filter type None
            raw += pack_row([s for p in row for s in p], depth)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


def adam7(rows):
    """The seven reduced images of Adam7 interlacing, empty ones left out."""
    passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]
    out = []
    for y0, x0, dy, dx in passes:
        sub = [row[x0::dx] for row in rows[y0::dy]]
        sub = [r for r in sub if r]
        if sub:
            out.append(sub)
    return out


def image(height, width, f):
    return [[f(y, x) for x in range(width)] for y in range(height)]


def main(out):
    def write(name, data):
        with open(f"{out}/{name}", "wb") as fh:
            fh.write(data)

    # The pixel formulas are repeated in tests/ops/image_codec_ops_test.cpp.
    write("rgb8.png", png(RGB, 8, image(3, 5, lambda y, x: (x * 50, y * 100, 255 - x * 20 - y * 10))))
    write("rgba8.png", png(RGBA, 8, image(2, 4, lambda y, x: (x * 60, y * 200, 7, 255 - x * 80 - y))))
    write("gray8.png", png(GRAY, 8, image(3, 4, lambda y, x: ((y * 4 + x) * 20,))))
    gray16 = [0x1234, 0xABCD, 0x0000, 0xFFFF, 0x0101, 0x80FF]
    write("gray16.png", png(GRAY, 16, image(2, 3, lambda y, x: (gray16[y * 3 + x],))))
    write("rgb16.png", png(RGB, 16, image(2, 2, lambda y, x: (1000 * (x + 1), 20000 + y, 65535 - x))))
    write("gray_alpha8.png", png(GRAY_ALPHA, 8, image(1, 3, lambda y, x: (x * 100, 255 - x * 50))))
    plte = chunk(b"PLTE", bytes([10, 20, 30, 200, 100, 0, 0, 0, 255]))
    write("palette2bit.png", png(PALETTE, 2, image(2, 5, lambda y, x: ((x + y) % 3,)), plte))
    trns = chunk(b"tRNS", bytes([255, 128, 0]))
    write("palette_trns.png", png(PALETTE, 8, image(1, 3, lambda y, x: (x,)), plte + trns))
    write("gray1bit.png", png(GRAY, 1, image(2, 9, lambda y, x: ((x + y) % 2,))))
    write("interlaced.png", png(RGB, 8, image(9, 9, lambda y, x: (x * 28, y * 28, (x * y) % 256)), interlace=True))

    # A header declaring 100000 x 100000 RGB pixels (30 GB) over one row of data.
    ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, RGB, 0, 0, 0)
    write("huge_dims.png", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
          chunk(b"IDAT", zlib.compress(b"\0" * 301)) + chunk(b"IEND", b""))
    # rgb8.png with one bit of its IDAT chunk's CRC flipped.
    good = bytearray(png(RGB, 8, image(3, 5, lambda y, x: (x * 50, y * 100, 255 - x * 20 - y * 10))))
    idat = good.index(b"IDAT")
    length = struct.unpack(">I", good[idat - 4:idat])[0]
    good[idat + 4 + length] ^= 0x01
    write("bad_crc.png", bytes(good))

    with open(f"{out}/blocks_gray.jpg", "rb") as fh:
        jpeg = bytearray(fh.read())
    sof = jpeg.index(b"\xff\xc0")  # marker, length (2), precision (1), height (2), width (2)
    jpeg[sof + 5:sof + 9] = struct.pack(">HH", 65500, 65500)
    write("huge_dims.jpg", bytes(jpeg))


if __name__ == "__main__":
    main(sys.argv[1])
