#!/usr/bin/env python3
"""Writes thumbhash-cases.json: ThumbHash known answers for ThumbHashTests.swift.

    python3 -m venv /tmp/th && /tmp/th/bin/pip install thumbhash-python==1.0.1
    cd Tools/Tests/Fixtures && /tmp/th/bin/python generate-thumbhash.py

Run once; the JSON is committed and the tests never run this. The images are synthetic and
deterministic (formulas and a fixed linear congruential generator, no randomness from the system), so
running it again writes the same file.

The hashes come from PyPI's thumbhash-python, an implementation of Evan Wallace's published algorithm
independent of Tessera's. It differs from the published JavaScript reference in one way that matters
here: Python's round() rounds halves to even, JavaScript's Math.round rounds them up. Every number the
encoder rounds (the luminance grid lx/ly, the header fields, the 4-bit coefficients) goes through the
name `round` in the package's modules, so each case is hashed twice, once as the package is and once
with that name bound to JavaScript's rounding; `thumbHash` is the JavaScript-rounding result (what the
reference and Tessera write), and when the package's own result differs it is kept as
`packageThumbHash` with a note. The decode is the package's own thumbhash_to_rgba, which rounds each
channel where the reference truncates, so its pixels may be 1 above the reference's; and for a hash
whose stored luminance count is below 3 (an image more than about 4.7 times taller than wide) it
sizes the placeholder from the clamped count, unlike the reference, which the case's decoded.note says.
"""
import base64
import json
import math
from importlib.metadata import version

import thumbhash.decode
import thumbhash.encode
import thumbhash.hash

PACKAGE = "thumbhash-python"


def js_round(x):
    """JavaScript's Math.round: the nearest integer, halves towards +infinity."""
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


def recording(calls):
    """JavaScript's rounding that also keeps every number it was given, in call order."""
    def rounding(x):
        calls.append(x)
        return js_round(x)
    return rounding


def near_halves(calls, has_alpha):
    """The rounded numbers within 1e-9 of a half, named by what they become. The package rounds, in
    order: lx and ly, the header fields, then each AC coefficient as a nibble. Such a number's side of the
    half can turn on the last bits of cos(), so another libm (JavaScript's, for one) may round it the
    other way: typically an AC term that is zero in exact arithmetic (a pattern symmetric along one
    axis) computed as +-1e-17, whose 15 * (0.5 + 0.5 * c / scale) is then 7.5 +- 1e-15."""
    header = ["lx", "ly", "L DC", "P DC", "Q DC", "L scale", "P scale", "Q scale"]
    header += ["A DC", "A scale"] if has_alpha else []
    start = 6 if has_alpha else 5
    found = []
    for i, x in enumerate(calls):
        if abs(x - math.floor(x) - 0.5) < 1e-9:
            if i < len(header):
                found.append({"field": header[i], "value": x})
            else:
                k = i - len(header)
                found.append({"field": "AC nibble", "nibble": k, "byte": start + k // 2,
                              "half": "high" if k % 2 else "low", "value": x})
    return found


def encode(width, height, rgba, rounding):
    """The package's rgba_to_thumbhash with `round` in its modules bound to `rounding`."""
    saved = thumbhash.encode.__dict__.get("round"), thumbhash.hash.__dict__.get("round")
    thumbhash.encode.round = rounding
    thumbhash.hash.round = rounding
    try:
        return thumbhash.encode.rgba_to_thumbhash(width, height, rgba)
    finally:
        for module, old in zip((thumbhash.encode, thumbhash.hash), saved):
            if old is None:
                del module.round
            else:
                module.round = old


class LCG:
    """Numerical Recipes' 32-bit linear congruential generator: the same numbers everywhere."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state >> 24


def premultiply(c, a):
    """Tessera's premultiplication, round(c * a / 255) (PixelConversion.premultiplyRow)."""
    return (2 * c * a + 255) // 510


def unpremultiply(p, a):
    """Tessera's un-premultiplication, (p * 255 + a / 2) / a capped at 255 (PixelConversion.unpremultiplyRow)."""
    return 0 if a == 0 else min(255, (p * 255 + a // 2) // a)


def snapped(r, g, b, a):
    """The straight colour Tessera reads back from this pixel stored premultiplied, so that a test that
    builds a premultiplied BGRA bitmap from the fixture hashes exactly these bytes."""
    out = []
    for c in (r, g, b):
        p = premultiply(c, a)
        back = unpremultiply(p, a)
        assert premultiply(back, a) == p
        out.append(back)
    return out + [a]


def clamp(v):
    return max(0, min(255, int(v)))


def gradient(w, h):
    px = []
    for y in range(h):
        for x in range(w):
            px += [x * 255 // (w - 1), y * 255 // (h - 1), 255 - x * 255 // (w - 1) // 2, 255]
    return px


def photo(w, h):
    """An opaque landscape: a sky gradient, a sun, hills and a noisy ground."""
    rng = LCG(20240611)
    px = []
    for y in range(h):
        for x in range(w):
            hill = h * 0.55 + 8 * math.sin(x / w * 2 * math.pi * 1.5) + 4 * math.cos(x / w * 2 * math.pi * 4)
            if (x - 0.72 * w) ** 2 + (y - 0.25 * h) ** 2 < (0.1 * w) ** 2:
                r, g, b = 250, 220, 90
            elif y < hill:
                t = y / hill
                r, g, b = 90 + 80 * t, 140 + 70 * t, 235 - 20 * t
            else:
                n = rng.next() - 128
                t = (y - hill) / (h - hill)
                r, g, b = 60 + 50 * t + n * 0.15, 120 - 30 * t + n * 0.2, 40 + 10 * t + n * 0.1
            px += [clamp(r), clamp(g), clamp(b), 255]
    return px


def transparent_disc(w, h):
    """A red-to-yellow disc on a transparent background with a soft edge (alpha 0…255)."""
    px = []
    cx, cy, radius = w / 2, h * 0.45, min(w, h) * 0.38
    for y in range(h):
        for x in range(w):
            d = math.hypot(x + 0.5 - cx, y + 0.5 - cy)
            a = clamp(255 * (radius + 3 - d) / 6)
            if a == 0:
                px += [0, 0, 0, 0]
            else:
                px += snapped(230, clamp(40 + 200 * y / h), clamp(30 + 60 * x / w), a)
    return px


def alpha_ramp(w, h):
    """Blue to green across, alpha falling from 255 at the top to 0 at the bottom."""
    px = []
    for y in range(h):
        a = 255 - y * 255 // (h - 1)
        for x in range(w):
            px += [0, 0, 0, 0] if a == 0 else snapped(20, x * 255 // (w - 1), 255 - x * 255 // (w - 1), a)
    return px


def stripes(w, h):
    """Opaque vertical stripes of three colours: many high-frequency terms along x."""
    colours = [(200, 30, 30), (30, 200, 30), (30, 30, 200)]
    px = []
    for y in range(h):
        for x in range(w):
            px += list(colours[(x // 3) % 3]) + [255]
    return px


def checker_alpha(w, h):
    """Opaque white and fully transparent squares: alpha 0 and 255 only."""
    px = []
    for y in range(h):
        for x in range(w):
            px += [255, 255, 255, 255] if (x // 4 + y // 4) % 2 == 0 else [0, 0, 0, 0]
    return px


def noise(w, h, seed, with_alpha):
    """Independent random pixels: no symmetry, so no coefficient is zero in exact arithmetic."""
    rng = LCG(seed)
    px = []
    for _ in range(w * h):
        r, g, b = rng.next(), rng.next(), rng.next()
        a = rng.next() if with_alpha else 255
        px += [0, 0, 0, 0] if a == 0 else snapped(r, g, b, a)
    return px


def solid(w, h, colour):
    return list(colour) * (w * h)


CASES = [
    ("gradient 64x48", 64, 48, gradient),
    ("photo-like 100x75", 100, 75, photo),
    ("transparent disc 60x90", 60, 90, transparent_disc),
    ("alpha ramp 50x50", 50, 50, alpha_ramp),
    ("stripes 7x100", 7, 100, stripes),
    ("checker with holes 40x25", 40, 25, checker_alpha),
    ("noise 37x53", 37, 53, lambda w, h: noise(w, h, 7, False)),
    ("noise with alpha 53x37", 53, 37, lambda w, h: noise(w, h, 11, True)),
    ("solid 1x1", 1, 1, lambda w, h: solid(w, h, (12, 200, 99, 255))),
    ("gradient 3x2", 3, 2, gradient),
    # 7 × 30 / 84 = 2.5 exactly: JavaScript rounds lx up to 3, Python's round() to 2.
    ("photo-like 30x84, lx tie", 30, 84, photo),
    # 5 × 10 / 20 = 2.5 exactly with alpha: the same tie on the alpha path.
    ("transparent disc 10x20, lx tie", 10, 20, transparent_disc),
]


def main():
    cases = []
    for name, w, h, make in CASES:
        rgba = make(w, h)
        assert len(rgba) == w * h * 4 and all(0 <= v <= 255 for v in rgba)
        calls = []
        reference = encode(w, h, rgba, recording(calls))
        package = encode(w, h, rgba, round)
        dw, dh, decoded = thumbhash.decode.thumbhash_to_rgba(reference)
        case = {
            "name": name,
            "width": w,
            "height": h,
            "rgba": base64.b64encode(bytes(rgba)).decode(),
            "thumbHash": base64.b64encode(reference).decode(),
            "decoded": {"width": dw, "height": dh, "rgba": base64.b64encode(bytes(decoded)).decode()},
        }
        if reference[3] & 7 < 3:
            case["decoded"]["note"] = (
                "the package sizes the placeholder from max(3, count) / 7 for a stored luminance count "
                "below 3; the reference's thumbHashToRGBA uses count / 7, so its size (and pixels) differ")
        halves = near_halves(calls, bool(reference[2] & 0x80))
        if halves:
            case["nearHalves"] = halves
        if package != reference:
            case["packageThumbHash"] = base64.b64encode(package).decode()
            case["note"] = ("the package as published rounds a half to even (Python's round) where the "
                            "reference's Math.round rounds it up; thumbHash is the reference rounding")
        cases.append(case)
    document = {
        "note": (f"ThumbHash known answers computed once by {PACKAGE} {version(PACKAGE)} (PyPI), an "
                 "implementation of Evan Wallace's published algorithm independent of Tessera's, with "
                 "its `round` bound to JavaScript's Math.round as the reference uses (generate-thumbhash.py "
                 "explains). rgba: straight RGBA, rows packed, base64. thumbHash: standard base64. "
                 "decoded: the package's thumbhash_to_rgba of thumbHash (channels rounded; the reference "
                 "truncates). nearHalves: numbers the encoder rounded that were within 1e-9 of a half, "
                 "whose rounding can depend on the libm's cos (see near_halves in the script)."),
        "source": {"package": PACKAGE, "version": version(PACKAGE)},
        "cases": cases,
    }
    with open("thumbhash-cases.json", "w", encoding="utf-8") as out:
        json.dump(document, out, indent=1)
        out.write("\n")
    for case in cases:
        print(case["name"], case["thumbHash"], case.get("packageThumbHash", ""))


if __name__ == "__main__":
    main()
