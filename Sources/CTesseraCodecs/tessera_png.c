#include "tessera_png.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <libdeflate.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <tmmintrin.h>
#endif

/* Asks the kernel for 2 MB pages under the 2 MB-aligned interior of a large block that is about to be
 * written from end to end (the IDAT chunks joined, the inflated image data: 16 MB for a 2560x1600 RGBA
 * image). Where the block is a mapping of its own (glibc's choice for large blocks; `tessera serve`
 * keeps every block over 1 MB out of its arenas), its pages are then faulted in and zeroed 512 at a time
 * instead of one by one: a cold request for such a PNG spent 5 % of its time in those faults. Where the
 * block is arena memory (batch commands reuse large blocks), its pages are already resident and stay as
 * they are. With the kernel's transparent huge pages off, the advice is ignored. */
static void prefer_huge_pages(void *block, size_t size) {
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (size < 2 * huge) return;
    uintptr_t start = ((uintptr_t)block + huge - 1) & ~(huge - 1), end = ((uintptr_t)block + size) & ~(huge - 1);
    if (end > start) (void)madvise((void *)start, (size_t)(end - start), MADV_HUGEPAGE);
#else
    (void)block;
    (void)size;
#endif
}

static uint32_t be32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }

/* c * a / 255, rounded: the same formula as PixelConversion.mulDiv255 in Swift. */
static inline uint32_t mul_div_255(uint32_t c, uint32_t a) {
    uint32_t t = c * a + 128;
    return (t + (t >> 8)) >> 8;
}

/* One RGBA pixel to premultiplied BGRA. */
static inline void premultiply_rgba(const uint8_t *p, uint8_t *o) {
    uint32_t a = p[3];
    if (a == 255) { o[0] = p[2]; o[1] = p[1]; o[2] = p[0]; o[3] = 255; }
    else if (a == 0) { o[0] = o[1] = o[2] = o[3] = 0; }
    else {
        o[0] = (uint8_t)mul_div_255(p[2], a); o[1] = (uint8_t)mul_div_255(p[1], a);
        o[2] = (uint8_t)mul_div_255(p[0], a); o[3] = (uint8_t)a;
    }
}

/* Box accumulation for the current block row. Rows are first summed down each input column, byte by byte
 * in 16-bit lanes (`columns`, SIMD-friendly; exact while a block has at most 257 rows, as 257 x 255 fits),
 * and the columns of each block are summed across only when the block row is emitted. Factors over 257 sum
 * each row across at once into `sums` instead. Integer sums: the order of the additions changes nothing. */
struct box {
    int factor, in_width, out_width;
    uint32_t *sums;      /* out_width * 4: B, G, R, A per output column */
    uint16_t *columns;   /* in_width * 4, or NULL when factor > 257 */
    int rows;            /* input rows added since the last emit */
};

enum { BOX_COLUMN_ROWS = 257 };

/* Sets up `box` (factor, widths, zeroed sums and columns). Returns 0 when out of memory. */
static int box_init(struct box *box, int factor, int in_width, int out_width) {
    box->factor = factor;
    box->in_width = in_width;
    box->out_width = out_width;
    box->rows = 0;
    box->sums = calloc((size_t)out_width * 4, sizeof(uint32_t));
    box->columns = factor <= BOX_COLUMN_ROWS ? calloc((size_t)in_width * 4, sizeof(uint16_t)) : NULL;
    return box->sums && (factor > BOX_COLUMN_ROWS || box->columns);
}

static void box_free(struct box *box) {
    free(box->sums);
    free(box->columns);
}

/* Adds one row of premultiplied BGRA pixels. */
static void box_add(struct box *box, const uint8_t *bgra) {
    int f = box->factor, w = box->in_width;
    if (box->columns) {
        uint16_t *c = box->columns;
        size_t n = (size_t)w * 4, i = 0;
#if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(bgra + i));
            __m128i low = _mm_loadu_si128((const __m128i *)(void *)(c + i));
            __m128i high = _mm_loadu_si128((const __m128i *)(void *)(c + i + 8));
            _mm_storeu_si128((__m128i *)(void *)(c + i), _mm_add_epi16(low, _mm_unpacklo_epi8(v, zero)));
            _mm_storeu_si128((__m128i *)(void *)(c + i + 8), _mm_add_epi16(high, _mm_unpackhi_epi8(v, zero)));
        }
#endif
        for (; i < n; i++) c[i] = (uint16_t)(c[i] + bgra[i]);
        box->rows++;
        return;
    }
    uint32_t *s = box->sums;
    for (int ox = 0, x = 0; x < w; ox++) {
        int end = x + f < w ? x + f : w;
        uint32_t b = 0, g = 0, r = 0, a = 0;
        for (; x < end; x++) {
            const uint8_t *p = bgra + (size_t)x * 4;
            b += p[0]; g += p[1]; r += p[2]; a += p[3];
        }
        s[ox * 4] += b; s[ox * 4 + 1] += g; s[ox * 4 + 2] += r; s[ox * 4 + 3] += a;
    }
    box->rows++;
}

/* Writes the means of the accumulated block row to `out` and starts a new block row. */
static void box_emit(struct box *box, uint8_t *out) {
    uint32_t *s = box->sums;
    int f = box->factor, w = box->in_width;
    if (box->columns) {
        const uint16_t *c = box->columns;
        for (int ox = 0, x = 0; x < w; ox++) {
            int end = x + f < w ? x + f : w;
            uint32_t b = 0, g = 0, r = 0, a = 0;
            for (; x < end; x++) {
                b += c[x * 4]; g += c[x * 4 + 1]; r += c[x * 4 + 2]; a += c[x * 4 + 3];
            }
            s[ox * 4] = b; s[ox * 4 + 1] = g; s[ox * 4 + 2] = r; s[ox * 4 + 3] = a;
        }
        memset(box->columns, 0, (size_t)w * 4 * sizeof(uint16_t));
    }
    /* (sum + count / 2) / count as a multiplication by ceil(2^40 / count): exact while count <= 65536,
     * since every sum is below 255 x count and so (sum + count / 2) x count stays below 2^40. */
    uint32_t full_count = (uint32_t)(f * box->rows);
    uint64_t full_inverse = ((1ULL << 40) + full_count - 1) / full_count;
    for (int ox = 0; ox < box->out_width; ox++) {
        int columns = (ox + 1) * f <= w ? f : w - ox * f;
        uint32_t count = (uint32_t)(columns * box->rows), half = count / 2;
        if (count <= 65536) {
            uint64_t inverse = count == full_count ? full_inverse : ((1ULL << 40) + count - 1) / count;
            for (int c = 0; c < 4; c++) out[ox * 4 + c] = (uint8_t)(((uint64_t)(s[ox * 4 + c] + half) * inverse) >> 40);
        } else {
            for (int c = 0; c < 4; c++) out[ox * 4 + c] = (uint8_t)((s[ox * 4 + c] + half) / count);
        }
    }
    memset(s, 0, (size_t)box->out_width * 4 * sizeof(uint32_t));
    box->rows = 0;
}

int tessera_box_reduce_bgra(const uint8_t *src, size_t src_pitch, int width, int height, int factor, uint8_t *dst,
                            size_t dst_pitch) {
    int out_width = (width + factor - 1) / factor;
    struct box box;
    if (!box_init(&box, factor, width, out_width)) {
        box_free(&box);
        return TESSERA_PNG_NO_MEMORY;
    }
    int oy = 0;
    for (int y = 0; y < height; y++) {
        box_add(&box, src + (size_t)y * src_pitch);
        if (box.rows == factor || y == height - 1) box_emit(&box, dst + (size_t)(oy++) * dst_pitch);
    }
    box_free(&box);
    return 0;
}

#if defined(__SSE2__)
/* The Paeth filter for 3- and 4-byte pixels, one pixel per step in 16-bit lanes: with a the pixel to
 * the left, b the one above and c the one above-left, the predictor is whichever of them is nearest
 * to a + b - c, ties going to a, then b (the PNG specification's order). */
static inline __attribute__((always_inline)) void unfilter_paeth_sse2_bpp(uint8_t *row, const uint8_t *prior, size_t length,
                                                                        const size_t bpp) {
    const __m128i zero = _mm_setzero_si128(), low_bytes = _mm_set1_epi16(0xFF);
    __m128i a = zero, c = zero;
    for (size_t i = 0; i + bpp <= length; i += bpp) {
        /* Fixed-size loads and stores (bpp is a constant here): no call to memcpy per pixel. */
        uint32_t above, here;
        if (bpp == 4 || i + 4 <= length) {
            /* 3-byte pixels: the fourth byte (the next pixel's) rides along in a lane that is never stored. */
            memcpy(&above, prior + i, 4);
            memcpy(&here, row + i, 4);
        } else {
            above = (uint32_t)prior[i] | (uint32_t)prior[i + 1] << 8 | (uint32_t)prior[i + 2] << 16;
            here = (uint32_t)row[i] | (uint32_t)row[i + 1] << 8 | (uint32_t)row[i + 2] << 16;
        }
        __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)above), zero);
        __m128i x = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)here), zero);
        /* Everything but a is known before the pixel to the left is: the distance pa and the two
         * outputs x + b and x + c are worked out beside the chain, which is then a - c, the distances
         * pb and pc, two comparisons and two selections. */
        __m128i bc = _mm_sub_epi16(b, c);
        __m128i pa = _mm_max_epi16(bc, _mm_sub_epi16(zero, bc));     /* |p - a| = |b - c| */
        __m128i xb = _mm_add_epi16(x, b), xc = _mm_add_epi16(x, c);
        __m128i ac = _mm_sub_epi16(a, c), abc = _mm_add_epi16(bc, ac);
        __m128i pb = _mm_max_epi16(ac, _mm_sub_epi16(zero, ac));     /* |p - b| = |a - c| */
        __m128i pc = _mm_max_epi16(abc, _mm_sub_epi16(zero, abc));   /* |p - c| = |a + b - 2c| */
        __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));   /* a unless pa > pb or pa > pc */
        __m128i take_c = _mm_cmpgt_epi16(pb, pc);                                         /* then b unless pb > pc */
        __m128i other = _mm_or_si128(_mm_and_si128(take_c, xc), _mm_andnot_si128(take_c, xb));
        __m128i xa = _mm_add_epi16(x, a);
        a = _mm_and_si128(_mm_or_si128(_mm_and_si128(not_a, other), _mm_andnot_si128(not_a, xa)), low_bytes);
        uint32_t out = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(a, zero));
        if (bpp == 4) {
            memcpy(row + i, &out, 4);
        } else {
            uint16_t low = (uint16_t)out;
            memcpy(row + i, &low, 2);
            row[i + 2] = (uint8_t)(out >> 16);
        }
        c = b;
    }
}

static void unfilter_paeth_sse2(uint8_t *row, const uint8_t *prior, size_t length, size_t bpp) {
    if (bpp == 4) unfilter_paeth_sse2_bpp(row, prior, length, 4);
    else unfilter_paeth_sse2_bpp(row, prior, length, 3);
}

/* Loads and stores of one 3- or 4-byte pixel in the low bytes of a register. A 3-byte pixel with a
 * byte after it in the row (`wide`) is loaded with that byte, in a lane that is never stored. */
static inline __attribute__((always_inline)) __m128i load_pixel(const uint8_t *p, const size_t bpp, int wide) {
    uint32_t v;
    if (bpp == 4 || wide) memcpy(&v, p, 4);
    else v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    return _mm_cvtsi32_si128((int)v);
}

static inline __attribute__((always_inline)) void store_pixel(uint8_t *p, __m128i x, const size_t bpp) {
    uint32_t v = (uint32_t)_mm_cvtsi128_si32(x);
    if (bpp == 4) {
        memcpy(p, &v, 4);
    } else {
        uint16_t low = (uint16_t)v;
        memcpy(p, &low, 2);
        p[2] = (uint8_t)(v >> 16);
    }
}

/* Sub and Average for 3- and 4-byte pixels, one pixel per step (each depends on the one to its left):
 * bytes add modulo 256, and the average is floor((a + b) / 2), which is _mm_avg_epu8's rounded-up mean
 * less the carry bit (a ^ b) & 1. */
static inline __attribute__((always_inline)) void unfilter_sub_sse2_bpp(uint8_t *row, size_t length, const size_t bpp) {
    __m128i a = _mm_setzero_si128();
    for (size_t i = 0; i + bpp <= length; i += bpp) {
        a = _mm_add_epi8(load_pixel(row + i, bpp, i + 4 <= length), a);
        store_pixel(row + i, a, bpp);
    }
}

static inline __attribute__((always_inline)) void unfilter_average_sse2_bpp(uint8_t *row, const uint8_t *prior, size_t length,
                                                                          const size_t bpp) {
    const __m128i one = _mm_set1_epi8(1);
    __m128i a = _mm_setzero_si128();
    for (size_t i = 0; i + bpp <= length; i += bpp) {
        int wide = i + 4 <= length;
        __m128i b = load_pixel(prior + i, bpp, wide);
        __m128i mean = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
        a = _mm_add_epi8(load_pixel(row + i, bpp, wide), mean);
        store_pixel(row + i, a, bpp);
    }
}

static void unfilter_sub_sse2(uint8_t *row, size_t length, size_t bpp) {
    if (bpp == 4) unfilter_sub_sse2_bpp(row, length, 4);
    else unfilter_sub_sse2_bpp(row, length, 3);
}

static void unfilter_average_sse2(uint8_t *row, const uint8_t *prior, size_t length, size_t bpp) {
    if (bpp == 4) unfilter_average_sse2_bpp(row, prior, length, 4);
    else unfilter_average_sse2_bpp(row, prior, length, 3);
}
#endif

/* Paeth for 1-byte pixels (gray), the byte to the left carried in a register rather than read back from
 * the row just written, and the choice made without branches (a photo's choices do not follow a pattern
 * a branch predictor can learn). Ties go to a, then b, as the specification orders them. */
static void unfilter_paeth_gray(uint8_t *row, const uint8_t *prior, size_t length) {
    int a = 0, c = 0;
    for (size_t i = 0; i < length; i++) {
        int b = prior[i];
        int p = b - c, q = a - c;
        int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
        int b_or_c = pb <= pc ? b : c;
        int predictor = ((pa <= pb) & (pa <= pc)) ? a : b_or_c;
        a = (uint8_t)(row[i] + predictor);
        row[i] = (uint8_t)a;
        c = b;
    }
}

/* Opaque RGB and gray rows to BGRA with SSSE3's byte shuffle where the processor has it (every x86-64
 * processor of the last fifteen years; the baseline the library is built for is SSE2): `width` pixels,
 * returning how many were written (the caller converts the rest). A 16-byte load never reaches past the
 * row's own bytes. */
#if defined(__x86_64__)
__attribute__((target("ssse3"))) static uint32_t rgb_to_bgra_ssse3(const uint8_t *row, uint8_t *o, uint32_t width) {
    const __m128i order = _mm_setr_epi8(2, 1, 0, -1, 5, 4, 3, -1, 8, 7, 6, -1, 11, 10, 9, -1);
    const __m128i alpha = _mm_set1_epi32((int)0xFF000000u);
    uint32_t x = 0;
    for (; 3 * (size_t)x + 16 <= 3 * (size_t)width; x += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(row + 3 * (size_t)x));
        _mm_storeu_si128((__m128i *)(void *)(o + 4 * (size_t)x), _mm_or_si128(_mm_shuffle_epi8(v, order), alpha));
    }
    return x;
}

__attribute__((target("ssse3"))) static uint32_t gray_to_bgra_ssse3(const uint8_t *row, uint8_t *o, uint32_t width) {
    const __m128i alpha = _mm_set1_epi32((int)0xFF000000u);
    const __m128i spread[4] = {
        _mm_setr_epi8(0, 0, 0, -1, 1, 1, 1, -1, 2, 2, 2, -1, 3, 3, 3, -1),
        _mm_setr_epi8(4, 4, 4, -1, 5, 5, 5, -1, 6, 6, 6, -1, 7, 7, 7, -1),
        _mm_setr_epi8(8, 8, 8, -1, 9, 9, 9, -1, 10, 10, 10, -1, 11, 11, 11, -1),
        _mm_setr_epi8(12, 12, 12, -1, 13, 13, 13, -1, 14, 14, 14, -1, 15, 15, 15, -1)};
    uint32_t x = 0;
    for (; x + 16 <= width; x += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(row + x));
        for (int k = 0; k < 4; k++)
            _mm_storeu_si128((__m128i *)(void *)(o + 4 * ((size_t)x + 4 * (size_t)k)), _mm_or_si128(_mm_shuffle_epi8(v, spread[k]), alpha));
    }
    return x;
}

/* The compiler's run-time check: a load of what its start-up code found in CPUID. */
static int has_ssse3(void) { return __builtin_cpu_supports("ssse3") ? 1 : 0; }
#endif

/* Undoes the PNG filter of one row in place (`prior` is the previous unfiltered row, or zeros). */
static int unfilter(uint8_t type, uint8_t *row, const uint8_t *prior, size_t length, size_t bpp) {
    size_t i;
    switch (type) {
    case 0: return 1;
    case 1:
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4) {
            unfilter_sub_sse2(row, length, bpp);
            return 1;
        }
#endif
        if (bpp == 1) {
            uint8_t a = row[0];
            for (i = 1; i < length; i++) row[i] = a = (uint8_t)(row[i] + a);
            return 1;
        }
        for (i = bpp; i < length; i++) row[i] = (uint8_t)(row[i] + row[i - bpp]);
        return 1;
    case 2:
        i = 0;
#if defined(__SSE2__)
        /* `row` and `prior` are different rows of one buffer (or zeros): 16 bytes at a time. */
        for (; i + 16 <= length; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(row + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(prior + i));
            _mm_storeu_si128((__m128i *)(void *)(row + i), _mm_add_epi8(x, b));
        }
#endif
        for (; i < length; i++) row[i] = (uint8_t)(row[i] + prior[i]);
        return 1;
    case 3:
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4) {
            unfilter_average_sse2(row, prior, length, bpp);
            return 1;
        }
#endif
        if (bpp == 1) {
            uint8_t a = 0;
            for (i = 0; i < length; i++) row[i] = a = (uint8_t)(row[i] + ((a + prior[i]) >> 1));
            return 1;
        }
        for (i = 0; i < bpp; i++) row[i] = (uint8_t)(row[i] + (prior[i] >> 1));
        for (; i < length; i++) row[i] = (uint8_t)(row[i] + ((row[i - bpp] + prior[i]) >> 1));
        return 1;
    case 4:
#if defined(__SSE2__)
        if (bpp == 3 || bpp == 4) {
            unfilter_paeth_sse2(row, prior, length, bpp);
            return 1;
        }
#endif
        if (bpp == 1) {
            unfilter_paeth_gray(row, prior, length);
            return 1;
        }
        for (i = 0; i < bpp; i++) row[i] = (uint8_t)(row[i] + prior[i]);
        for (; i < length; i++) {
            int a = row[i - bpp], b = prior[i], c = prior[i - bpp];
            int p = b - c, q = a - c;
            int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
            int predictor = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
            row[i] = (uint8_t)(row[i] + predictor);
        }
        return 1;
    default: return 0;
    }
}

int tessera_png_decode_reduced(const uint8_t *data, size_t size, int factor, uint8_t *pixels, size_t pitch,
                               int out_width, int out_height) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (factor < 1 || size < 8 + 25 || memcmp(data, signature, 8) != 0) return TESSERA_PNG_UNSUPPORTED;

    /* Chunks: IHDR first; PLTE, tRNS and gAMA read; IDAT payloads collected; IEND ends. */
    uint32_t width = 0, height = 0;
    int depth = 0, color_type = -1, seen_ihdr = 0, seen_iend = 0, palette_count = 0;
    uint8_t palette[256 * 4];   /* premultiplied BGRA per index */
    uint8_t palette_rgb[256 * 3];
    uint8_t palette_alpha[256];
    int has_key = 0;
    uint16_t key[3] = {0, 0, 0};
    size_t idat_total = 0;
    memset(palette_alpha, 255, sizeof palette_alpha);

    size_t i = 8;
    while (i + 12 <= size) {
        uint32_t length = be32(data + i);
        const uint8_t *type = data + i + 4, *body = data + i + 8;
        if (length > size - i - 12) return TESSERA_PNG_UNSUPPORTED;
        int critical = !(type[0] & 0x20);
        if (critical || memcmp(type, "tRNS", 4) == 0 || memcmp(type, "gAMA", 4) == 0) {
            uint32_t crc = libdeflate_crc32(0, type, (size_t)length + 4);
            if (crc != be32(body + length)) return TESSERA_PNG_UNSUPPORTED;
        }
        if (!seen_ihdr) {
            if (memcmp(type, "IHDR", 4) != 0 || length != 13) return TESSERA_PNG_UNSUPPORTED;
            width = be32(body); height = be32(body + 4);
            depth = body[8]; color_type = body[9];
            if (width == 0 || height == 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF) return TESSERA_PNG_UNSUPPORTED;
            if ((depth != 8 && depth != 16) || body[10] != 0 || body[11] != 0 || body[12] != 0) return TESSERA_PNG_UNSUPPORTED;
            if (color_type != 0 && color_type != 2 && color_type != 3 && color_type != 4 && color_type != 6)
                return TESSERA_PNG_UNSUPPORTED;
            if (depth == 16 && color_type == 3) return TESSERA_PNG_UNSUPPORTED;
            seen_ihdr = 1;
        } else if (memcmp(type, "PLTE", 4) == 0) {
            if (length % 3 != 0 || length == 0 || length > 768 || palette_count) return TESSERA_PNG_UNSUPPORTED;
            palette_count = (int)(length / 3);
            memcpy(palette_rgb, body, length);
        } else if (memcmp(type, "tRNS", 4) == 0) {
            if (color_type == 3) {
                if (!palette_count || length > (uint32_t)palette_count) return TESSERA_PNG_UNSUPPORTED;
                memcpy(palette_alpha, body, length);
            } else if (depth == 16) {
                return TESSERA_PNG_UNSUPPORTED;   /* 16-bit colour keys: left to libpng */
            } else if (color_type == 0 && length == 2) {
                has_key = 1; key[0] = (uint16_t)((body[0] << 8) | body[1]);
            } else if (color_type == 2 && length == 6) {
                has_key = 1;
                for (int k = 0; k < 3; k++) key[k] = (uint16_t)((body[2 * k] << 8) | body[2 * k + 1]);
            } else {
                return TESSERA_PNG_UNSUPPORTED;
            }
        } else if (memcmp(type, "gAMA", 4) == 0) {
            /* Only sRGB's gamma (1/2.2, stored as 45455) leaves the pixels as they are in libpng. */
            if (length != 4) return TESSERA_PNG_UNSUPPORTED;
            uint32_t gamma = be32(body);
            if (gamma < 45000 || gamma > 46000) return TESSERA_PNG_UNSUPPORTED;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            idat_total += length;
        } else if (memcmp(type, "IEND", 4) == 0) {
            seen_iend = 1;
            break;
        } else if (critical) {
            return TESSERA_PNG_UNSUPPORTED;
        }
        i += 12 + (size_t)length;
    }
    if (!seen_iend || idat_total == 0 || (color_type == 3 && !palette_count)) return TESSERA_PNG_UNSUPPORTED;
    if ((int)((width + (uint32_t)factor - 1) / (uint32_t)factor) != out_width ||
        (int)((height + (uint32_t)factor - 1) / (uint32_t)factor) != out_height)
        return TESSERA_PNG_UNSUPPORTED;

    size_t channels = color_type == 0 ? 1 : color_type == 2 ? 3 : color_type == 3 ? 1 : color_type == 4 ? 2 : 4;
    size_t sample_bytes = (size_t)depth / 8, bpp = channels * sample_bytes;
    size_t row_bytes = (size_t)width * bpp;
    if (row_bytes / bpp != width || (size_t)height > (SIZE_MAX - 1) / (row_bytes + 1)) return TESSERA_PNG_UNSUPPORTED;
    size_t raw_size = (row_bytes + 1) * (size_t)height;

    /* The zlib stream: one buffer when there are several IDAT chunks. */
    const uint8_t *stream = NULL;
    uint8_t *joined = NULL;
    int idat_chunks = 0;
    for (size_t j = 8; j + 12 <= size;) {
        uint32_t length = be32(data + j);
        if (memcmp(data + j + 4, "IDAT", 4) == 0) { idat_chunks++; if (!stream) stream = data + j + 8; }
        if (memcmp(data + j + 4, "IEND", 4) == 0) break;
        j += 12 + (size_t)length;
    }
    if (idat_chunks > 1) {
        joined = malloc(idat_total);
        if (!joined) return TESSERA_PNG_NO_MEMORY;
        prefer_huge_pages(joined, idat_total);
        size_t o = 0;
        for (size_t j = 8; j + 12 <= size;) {
            uint32_t length = be32(data + j);
            if (memcmp(data + j + 4, "IDAT", 4) == 0) { memcpy(joined + o, data + j + 8, length); o += length; }
            if (memcmp(data + j + 4, "IEND", 4) == 0) break;
            j += 12 + (size_t)length;
        }
        stream = joined;
    }

    uint8_t *raw = malloc(raw_size);
    if (raw) prefer_huge_pages(raw, raw_size);
    uint8_t *bgra = malloc((size_t)width * 4);
    uint8_t *zeros = calloc(row_bytes, 1);
    uint8_t *narrow = depth == 16 ? malloc((size_t)width * channels) : NULL;   /* 16-bit samples scaled to 8 */
    struct box box;
    int boxed = box_init(&box, factor, (int)width, out_width);
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    int result = TESSERA_PNG_OK;
    if (!raw || !bgra || !zeros || !boxed || !inflater || (depth == 16 && !narrow)) { result = TESSERA_PNG_NO_MEMORY; goto done; }

    /* The whole stream must inflate to exactly the image data: anything else goes to libpng. */
    size_t produced = 0;
    if (libdeflate_zlib_decompress(inflater, stream, idat_total, raw, raw_size, &produced) != LIBDEFLATE_SUCCESS ||
        produced != raw_size) {
        result = TESSERA_PNG_UNSUPPORTED;
        goto done;
    }

    if (color_type == 3) {
        for (int k = 0; k < 256; k++) {
            uint32_t a = k < palette_count ? palette_alpha[k] : 255;
            const uint8_t *rgb = palette_rgb + 3 * (k < palette_count ? k : 0);
            palette[4 * k] = (uint8_t)mul_div_255(rgb[2], a);
            palette[4 * k + 1] = (uint8_t)mul_div_255(rgb[1], a);
            palette[4 * k + 2] = (uint8_t)mul_div_255(rgb[0], a);
            palette[4 * k + 3] = (uint8_t)a;
        }
    }

    const uint8_t *prior = zeros;
    int oy = 0;
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *line = raw + (size_t)y * (row_bytes + 1);
        uint8_t *row = line + 1;
        if (!unfilter(line[0], row, prior, row_bytes, bpp)) { result = TESSERA_PNG_UNSUPPORTED; goto done; }
        prior = row;
        if (depth == 16) {
            /* libpng's png_set_scale_16: the nearest 8-bit value, v / 257 rounded. */
            for (size_t k = 0; k < (size_t)width * channels; k++) {
                int32_t high = row[2 * k];
                narrow[k] = (uint8_t)(high + ((((int32_t)row[2 * k + 1] - high + 128) * 65535) >> 24));
            }
            row = narrow;
        }
        uint8_t *o = bgra;
        switch (color_type) {
        case 0: {
            uint32_t x = 0;
#if defined(__x86_64__)
            if (!has_key && has_ssse3()) { x = gray_to_bgra_ssse3(row, o, width); o += 4 * (size_t)x; }
#endif
            for (; x < width; x++, o += 4) {
                uint8_t v = row[x];
                if (has_key && v == key[0]) { o[0] = o[1] = o[2] = o[3] = 0; continue; }
                o[0] = o[1] = o[2] = v; o[3] = 255;
            }
            break;
        }
        case 2: {
            if (has_key) {
                for (uint32_t x = 0; x < width; x++, o += 4) {
                    const uint8_t *p = row + 3 * (size_t)x;
                    if (p[0] == key[0] && p[1] == key[1] && p[2] == key[2]) { o[0] = o[1] = o[2] = o[3] = 0; continue; }
                    o[0] = p[2]; o[1] = p[1]; o[2] = p[0]; o[3] = 255;
                }
                break;
            }
            uint32_t x = 0;
#if defined(__x86_64__)
            if (has_ssse3()) { x = rgb_to_bgra_ssse3(row, o, width); o += 4 * (size_t)x; }
#endif
            for (; x < width; x++, o += 4) {
                const uint8_t *p = row + 3 * (size_t)x;
                if (x + 1 < width) {
                    /* R, G, B and the next pixel's R as one little-endian word, rearranged to B, G, R, 255. */
                    uint32_t v, bgra_word;
                    memcpy(&v, p, 4);
                    bgra_word = 0xFF000000u | (v & 0xFFu) << 16 | (v & 0xFF00u) | (v >> 16 & 0xFFu);
                    memcpy(o, &bgra_word, 4);
                    continue;
                }
                o[0] = p[2]; o[1] = p[1]; o[2] = p[0]; o[3] = 255;
            }
            break;
        }
        case 3:
            for (uint32_t x = 0; x < width; x++, o += 4) {
                uint8_t index = row[x];
                if (index >= palette_count) { result = TESSERA_PNG_UNSUPPORTED; goto done; }
                memcpy(o, palette + 4 * (size_t)index, 4);
            }
            break;
        case 4:
            for (uint32_t x = 0; x < width; x++, o += 4) {
                uint32_t v = row[2 * (size_t)x], a = row[2 * (size_t)x + 1];
                uint8_t m = a == 255 ? (uint8_t)v : (uint8_t)mul_div_255(v, a);
                o[0] = o[1] = o[2] = m; o[3] = (uint8_t)a;
            }
            break;
        default: {
            uint32_t x = 0;
#if defined(__SSE2__)
            /* Four pixels at a time while all four are opaque: R and B trade places, G and A stay. */
            const __m128i alpha = _mm_set1_epi32((int)0xFF000000u), green_alpha = _mm_set1_epi32((int)0xFF00FF00u),
                          low_byte = _mm_set1_epi32(0xFF);
            for (; x + 4 <= width; x += 4, o += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(row + 4 * (size_t)x));
                if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(v, alpha), alpha)) != 0xFFFF) {
                    for (int k = 0; k < 4; k++) premultiply_rgba(row + 4 * ((size_t)x + (size_t)k), o + 4 * k);
                    continue;
                }
                __m128i swapped = _mm_or_si128(_mm_and_si128(v, green_alpha),
                                               _mm_or_si128(_mm_and_si128(_mm_srli_epi32(v, 16), low_byte),
                                                            _mm_slli_epi32(_mm_and_si128(v, low_byte), 16)));
                _mm_storeu_si128((__m128i *)(void *)o, swapped);
            }
#endif
            for (; x < width; x++, o += 4) premultiply_rgba(row + 4 * (size_t)x, o);
            break;
        }
        }
        if (factor == 1) {
            memcpy(pixels + (size_t)(oy++) * pitch, bgra, (size_t)width * 4);
            continue;
        }
        box_add(&box, bgra);
        if (box.rows == factor || y == height - 1) box_emit(&box, pixels + (size_t)(oy++) * pitch);
    }

done:
    if (inflater) libdeflate_free_decompressor(inflater);
    box_free(&box);
    free(zeros);
    free(narrow);
    free(bgra);
    free(raw);
    free(joined);
    return result;
}

/* ---- Truncated files: the rows that arrived, through libpng's progressive reader ---- */

#include <png.h>
#include <setjmp.h>

/* Adam7: first column and row, and their steps, per pass; and the block each pass's pixel stands for
 * while the later passes are missing (libpng's "display" rows: 8x8 for the first pass ... 1x1). */
static const uint32_t adam7_x0[7] = {0, 4, 0, 2, 0, 1, 0}, adam7_dx[7] = {8, 8, 4, 4, 2, 2, 1};
static const uint32_t adam7_y0[7] = {0, 0, 4, 0, 2, 0, 1}, adam7_dy[7] = {8, 8, 8, 4, 4, 2, 2};
static const uint32_t adam7_bw[7] = {8, 4, 4, 2, 2, 1, 1}, adam7_bh[7] = {8, 8, 4, 4, 2, 2, 1};

enum { STORED_BLOCK = 65535, BLOCK_CHUNK = 12 + 5 + STORED_BLOCK };

struct salvage_state {
    uint8_t *file;
    size_t blocks_at;          /* offset of the first stored-block IDAT chunk in `file` */
    int interlaced;
    uint32_t pass_rows[7];
    size_t pass_rowbytes[7];
    size_t pass_offset[7];     /* offset of the pass's first filter byte in the inflated stream */
    uint32_t *received;
};

/* Copies `n` bytes to offset `at` of the inflated stream, which is spread over stored blocks. */
static void salvage_put(struct salvage_state *s, size_t at, const uint8_t *bytes, size_t n) {
    while (n > 0) {
        size_t block = at / STORED_BLOCK, within = at % STORED_BLOCK;
        size_t m = STORED_BLOCK - within < n ? STORED_BLOCK - within : n;
        memcpy(s->file + s->blocks_at + block * BLOCK_CHUNK + 8 + 5 + within, bytes, m);
        at += m; bytes += m; n -= m;
    }
}

static void salvage_row(png_structp png, png_bytep row, png_uint_32 row_number, int pass) {
    struct salvage_state *s = png_get_progressive_ptr(png);
    int p = s->interlaced ? pass : 0;
    if (!row || p < 0 || p > 6 || row_number >= s->pass_rows[p]) return;
    salvage_put(s, s->pass_offset[p] + (size_t)row_number * (s->pass_rowbytes[p] + 1) + 1, row, s->pass_rowbytes[p]);
    if (row_number + 1 > s->received[p]) s->received[p] = row_number + 1;
}

static void salvage_info(png_structp png, png_infop info) {
    (void)info;
    png_start_read_image(png);
}

static void salvage_error(png_structp png, png_const_charp message) {
    (void)message;
    png_longjmp(png, 1);
}

static void salvage_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

static void put_be32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }

/* Writes the chunk header for `length` bytes of `type` at `p` and its CRC after the body (already there). */
static void finish_chunk(uint8_t *p, const char *type, uint32_t length) {
    put_be32(p, length);
    memcpy(p + 4, type, 4);
    put_be32(p + 8 + length, (uint32_t)libdeflate_crc32(0, p + 4, (size_t)length + 4));
}

static int run_progressive(struct salvage_state *s, const uint8_t *data, size_t size) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, salvage_error, salvage_warning);
    if (!png) return 0;
    png_infop info = png_create_info_struct(png);
    if (!info) { png_destroy_read_struct(&png, NULL, NULL); return 0; }
    int failed = 0;
    if (setjmp(png_jmpbuf(png))) {
        failed = 1;
    } else {
        png_set_progressive_read_fn(png, s, salvage_info, salvage_row, NULL);
        png_process_data(png, info, (png_bytep)data, size);
    }
    png_destroy_read_struct(&png, &info, NULL);
    return !failed;
}

int tessera_png_salvage(const uint8_t *data, size_t size, struct tessera_png_salvage *result) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    memset(result, 0, sizeof *result);
    if (size < 8 + 25 || memcmp(data, signature, 8) != 0 || memcmp(data + 12, "IHDR", 4) != 0) return TESSERA_PNG_UNSUPPORTED;
    uint32_t width = be32(data + 16), height = be32(data + 20);
    int depth = data[24], color_type = data[25], interlaced = data[28];
    int channels = color_type == 0 ? 1 : color_type == 2 ? 3 : color_type == 3 ? 1 : color_type == 4 ? 2 : color_type == 6 ? 4 : 0;
    if (!channels || (depth != 1 && depth != 2 && depth != 4 && depth != 8 && depth != 16) || interlaced > 1 ||
        width == 0 || height == 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF)
        return TESSERA_PNG_UNSUPPORTED;

    /* The chunks before the first IDAT are copied as they are (palette, transparency, colour). */
    size_t first_idat = 0;
    for (size_t i = 8; i + 12 <= size;) {
        uint32_t length = be32(data + i);
        if (memcmp(data + i + 4, "IDAT", 4) == 0) { first_idat = i; break; }
        if (length > size - i - 12) break;
        i += 12 + (size_t)length;
    }
    if (!first_idat) return TESSERA_PNG_UNSUPPORTED;   /* no image data arrived */

    struct salvage_state s;
    memset(&s, 0, sizeof s);
    s.interlaced = interlaced;
    s.received = result->received_rows;
    size_t bits = (size_t)channels * (size_t)depth, raw_size = 0;
    for (int p = 0; p < (interlaced ? 7 : 1); p++) {
        uint32_t columns = interlaced ? (width > adam7_x0[p] ? (width - adam7_x0[p] + adam7_dx[p] - 1) / adam7_dx[p] : 0) : width;
        uint32_t rows = interlaced ? (height > adam7_y0[p] ? (height - adam7_y0[p] + adam7_dy[p] - 1) / adam7_dy[p] : 0) : height;
        if (columns == 0 || rows == 0) continue;
        s.pass_rows[p] = rows;
        s.pass_rowbytes[p] = ((size_t)columns * bits + 7) / 8;
        s.pass_offset[p] = raw_size;
        if (s.pass_rowbytes[p] >= SIZE_MAX / 2 / rows) return TESSERA_PNG_NO_MEMORY;
        raw_size += (s.pass_rowbytes[p] + 1) * (size_t)rows;
    }

    /* signature, chunks before IDAT | IDAT: zlib header | IDAT: stored block ... | IDAT: Adler-32 | IEND */
    size_t blocks = (raw_size + STORED_BLOCK - 1) / STORED_BLOCK;
    if (blocks > (SIZE_MAX - first_idat - 64) / BLOCK_CHUNK) return TESSERA_PNG_NO_MEMORY;
    size_t total = first_idat + (12 + 2) + blocks * (12 + 5) + raw_size + (12 + 4) + 12;
    s.file = calloc(total, 1);
    if (!s.file) return TESSERA_PNG_NO_MEMORY;
    memcpy(s.file, data, first_idat);
    uint8_t *zlib_header = s.file + first_idat;
    zlib_header[8] = 0x78; zlib_header[9] = 0x01;
    finish_chunk(zlib_header, "IDAT", 2);
    s.blocks_at = first_idat + 14;

    run_progressive(&s, data, size);   /* a libpng error ends it like the end of data: the rows before it stay */

    uint32_t adler = 1;
    for (size_t b = 0; b < blocks; b++) {
        uint8_t *chunk = s.file + s.blocks_at + b * BLOCK_CHUNK;
        size_t n = b + 1 < blocks ? STORED_BLOCK : raw_size - b * STORED_BLOCK;
        uint8_t *header = chunk + 8;
        header[0] = b + 1 == blocks ? 1 : 0;
        header[1] = (uint8_t)n; header[2] = (uint8_t)(n >> 8);
        header[3] = (uint8_t)~n; header[4] = (uint8_t)(~n >> 8);
        adler = libdeflate_adler32(adler, header + 5, n);
        finish_chunk(chunk, "IDAT", (uint32_t)(5 + n));
    }
    uint8_t *tail = s.file + s.blocks_at + blocks * (12 + 5) + raw_size;   /* every block but the last is full */
    put_be32(tail + 8, adler);
    finish_chunk(tail, "IDAT", 4);
    finish_chunk(tail + 16, "IEND", 0);

    result->file = s.file;
    result->file_size = total;
    result->interlaced = interlaced;
    result->width = width;
    result->height = height;
    uint32_t arrived = 0;
    if (!interlaced) arrived = result->received_rows[0];
    else if (result->received_rows[0] >= s.pass_rows[0]) arrived = height;
    else arrived = result->received_rows[0] * 8 < height ? result->received_rows[0] * 8 : height;
    result->arrived_rows = arrived;
    return TESSERA_PNG_OK;
}

void tessera_png_salvage_free(struct tessera_png_salvage *result) {
    free(result->file);
    result->file = NULL;
}

void tessera_png_fill_missing(uint8_t *pixels, size_t pitch, const struct tessera_png_salvage *salvage, uint32_t fill) {
    uint32_t width = salvage->width, height = salvage->height;
    for (uint32_t y = 0; y < height; y++) {
        uint32_t *row = (uint32_t *)(void *)(pixels + (size_t)y * pitch);
        if (!salvage->interlaced) {
            if (y >= salvage->received_rows[0]) for (uint32_t x = 0; x < width; x++) row[x] = fill;
            continue;
        }
        for (uint32_t x = 0; x < width; x++) {
            /* The pass of (x, y): the last one whose grid holds it. */
            int q = 6;
            while (q > 0 && !((x >= adam7_x0[q] && (x - adam7_x0[q]) % adam7_dx[q] == 0) &&
                              (y >= adam7_y0[q] && (y - adam7_y0[q]) % adam7_dy[q] == 0))) q--;
            if ((y - adam7_y0[q]) / adam7_dy[q] < salvage->received_rows[q]) continue;   /* it arrived */
            uint32_t value = fill;
            for (int p = q - 1; p >= 0; p--) {
                if (x < adam7_x0[p] || y < adam7_y0[p]) continue;
                uint32_t ox = adam7_x0[p] + (x - adam7_x0[p]) / adam7_dx[p] * adam7_dx[p];
                uint32_t oy = adam7_y0[p] + (y - adam7_y0[p]) / adam7_dy[p] * adam7_dy[p];
                if (x - ox >= adam7_bw[p] || y - oy >= adam7_bh[p]) continue;   /* not in this pass's block */
                if ((oy - adam7_y0[p]) / adam7_dy[p] >= salvage->received_rows[p]) continue;
                value = ((const uint32_t *)(const void *)(pixels + (size_t)oy * pitch))[ox];
                break;
            }
            row[x] = value;
        }
    }
}
