#!/usr/bin/python3
"""Regenerates the HEIC and AVIF fixtures (synthetic content, 32x32 quadrants like generate.py's)
with libheif's heif-enc (Debian's libheif-examples 1.15: x265 for HEIC, libaom for AVIF). Needs only
the standard library: the source PNGs are written here. Run from this directory:
/usr/bin/python3 generate-heif.py"""
import os, struct, subprocess, tempfile, zlib

W, H = 32, 32

def png(path, colors):
    """A W x H RGBA PNG whose quadrants are colors[0..3] (top-left, top-right, bottom-left, bottom-right)."""
    raw = bytearray()
    for y in range(H):
        raw.append(0)
        for x in range(W):
            raw.extend(colors[(2 if y >= H // 2 else 0) + (1 if x >= W // 2 else 0)])
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 6, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)

with tempfile.TemporaryDirectory() as tmp:
    opaque, alpha = os.path.join(tmp, "opaque.png"), os.path.join(tmp, "alpha.png")
    png(opaque, [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)])
    png(alpha, [(255, 0, 0, 255), (0, 255, 0, 128), (0, 0, 255, 0), (255, 255, 255, 255)])
    # --no-alpha: the opaque PNG has an alpha channel (all 255) that would otherwise become an alpha item.
    subprocess.run(["heif-enc", "--no-alpha", "-q", "90", "-p", "chroma=444", "-o", "lossy.heic", opaque], check=True)
    subprocess.run(["heif-enc", "--no-alpha", "-A", "-q", "90", "-p", "chroma=444", "-o", "lossy.avif", opaque], check=True)
    subprocess.run(["heif-enc", "-A", "-q", "90", "-p", "chroma=444", "-o", "alpha.avif", alpha], check=True)
