#!/usr/bin/python3
"""Regenerates the codec test fixtures (synthetic content). Run from this directory with
Debian's python3 + Pillow 9.4: /usr/bin/python3 generate.py"""
import struct, zlib
from PIL import Image

W, H = 32, 32
RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)

def quadrants(mode="RGB", colors=(RED, GREEN, BLUE, WHITE), size=(W, H)):
    w, h = size
    im = Image.new(mode, size)
    px = im.load()
    for y in range(h):
        for x in range(w):
            px[x, y] = colors[(2 if y >= h // 2 else 0) + (1 if x >= w // 2 else 0)]
    return im

# JPEG
rgb = quadrants()
rgb.save("baseline.jpg", quality=95, subsampling=0)
rgb.save("progressive.jpg", quality=95, subsampling=0, progressive=True)
quadrants("L", (30, 100, 170, 240)).save("gray.jpg", quality=95)
cmyk = quadrants("CMYK", ((0, 255, 255, 0), (255, 0, 255, 0), (255, 255, 0, 0), (0, 0, 0, 128)))
cmyk.save("cmyk.jpg", quality=95)
print("cmyk.jpg decoded by Pillow, per quadrant:",
      [Image.open("cmyk.jpg").convert("RGB").getpixel(p) for p in [(4, 4), (28, 4), (4, 28), (28, 28)]])

# PNG
pal = quadrants("P", (0, 1, 2, 3))
pal.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
pal.save("palette.png")
quadrants("L", (0, 85, 170, 255)).save("gray.png")
g16 = Image.new("I;16", (W, H))
px = g16.load()
for y in range(H):
    for x in range(W):
        px[x, y] = 0x8080 if x < W // 2 else 0xFFFF
g16.save("gray16.png")
trns = quadrants()   # green quadrant becomes transparent through tRNS
trns.save("trns.png", transparency=GREEN)

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

def adam7_png(im, path):
    w, h = im.size
    px = im.load()
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        xs, ys = range(x0, w, dx), range(y0, h, dy)
        if not xs or not ys:
            continue
        for y in ys:
            raw.append(0)
            for x in xs:
                raw.extend(px[x, y])
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 1))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)

adam7_png(rgb, "interlaced.png")

# WebP
rgb.save("lossy.webp", quality=95)
rgb.save("lossless.webp", lossless=True)
rgba = quadrants("RGBA", ((255, 0, 0, 255), (0, 255, 0, 128), (0, 0, 255, 0), (255, 255, 255, 255)))
rgba.save("alpha.webp", lossless=True)

# GIF: palette with index 1 (green) transparent, interlaced by Pillow
gif = quadrants("P", (0, 1, 2, 3))
gif.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
gif.save("transparent.gif", transparency=1, interlace=True)
