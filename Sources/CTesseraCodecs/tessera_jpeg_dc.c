#include "tessera_jpeg.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Baseline JPEG at 1/8 scale from the DC coefficients alone.
 *
 * At 1/8 scale every output pixel of a component is its block's DC value (libjpeg's 1x1 inverse DCT:
 * (DC x Q + 4) >> 3, + 128). This decoder walks the Huffman data once, keeping each block's DC and
 * skipping the AC symbols with tables that give, for the next bits, the code lengths plus the sizes
 * of the values that follow for up to three symbols (no value is extracted). For 4:2:0, chroma blocks
 * are decoded with their values (a code and its value from one table lookup where they fit) and reduced
 * by libjpeg's 2x2 inverse DCT, as libjpeg does at this scale (a block without AC values is flat);
 * 4:2:2 chroma is repeated across, as libjpeg does; colours use libjpeg's YCbCr tables. Files it does
 * not take (anything but 8-bit Huffman baseline with one interleaved scan, gray or YCbCr with 1x1 chroma) or
 * finds damaged or truncated, and files libjpeg would warn about (bytes between segments, a JFIF
 * version other than 1.x, an unknown Adobe transform), return TESSERA_JPEG_UNSUPPORTED, and the
 * caller decodes with libjpeg, which reports the damage. */

#define SKIP_BITS 10
#define MULTI_BITS 12
#define MULTI_EOB 64                 /* at most 3 x 16 coefficients stepped before it */
#define MULTI_NONE (127 << 4)

struct huffman {
    /* Canonical decoding per code length (JPEG Annex F / libjpeg's jdhuff.c). */
    int32_t maxcode[18];
    int32_t valoffset[18];
    uint8_t values[256];
    /* Codes of at most SKIP_BITS bits: length << 8 | symbol, 0 when longer. */
    uint16_t lookup[1 << SKIP_BITS];
    /* Codes whose length plus value size fit SKIP_BITS: the value (extended) << 16 | advance, and for AC
     * tables (EOB and ZRL included, with value 0) also coefficients stepped << 8 | eob << 5; 0 for the
     * slow path. Blocks whose values are decoded take all of it, blocks whose symbols are skipped the low
     * 16 bits. */
    uint32_t fast[1 << SKIP_BITS];
    int defined;
    /* AC tables of components reduced to their DC value only (build_multi fills it; build_huffman leaves
     * it as it was): up to three whole symbols (code and value) within the next MULTI_BITS bits, none
     * after an EOB: advance | coefficients stepped << 4, with MULTI_EOB added to the steps of a group
     * that ends in an EOB; MULTI_NONE when not even one symbol fits. A group that neither ends the block
     * nor runs past coefficient 63 is then the one test k + (entry >> 4) <= 63. */
    uint16_t multi[1 << MULTI_BITS];
};

struct bit_reader {
    const uint8_t *data;
    size_t size, pos;
    uint64_t bits;   /* left-aligned */
    int count;       /* valid bits in `bits` */
    int fake;        /* zero bits inserted at a marker or at the end of the data */
};

static int build_huffman(struct huffman *table, const uint8_t counts[16], const uint8_t *symbols, int total, int ac) {
    memset(table, 0, offsetof(struct huffman, multi));
    memcpy(table->values, symbols, (size_t)total);
    int code = 0, index = 0;
    for (int length = 1; length <= 16; length++) {
        int n = counts[length - 1];
        table->valoffset[length] = index - code;
        if (n) {
            for (int i = 0; i < n; i++, index++, code++) {
                if (code >= (1 << length)) return 0;   /* over-subscribed */
                if (length <= SKIP_BITS) {
                    int shift = SKIP_BITS - length;
                    uint8_t symbol = symbols[index];
                    for (int fill = 0; fill < (1 << shift); fill++) {
                        int slot = (code << shift) | fill;
                        table->lookup[slot] = (uint16_t)(length << 8 | symbol);
                        if (!ac) {
                            /* A DC difference: `symbol` is the size of the value that follows the code. */
                            int advance = length + symbol;
                            if (symbol > 11 || advance > SKIP_BITS) continue;
                            int value = 0;
                            if (symbol) {
                                value = (slot >> (SKIP_BITS - advance)) & ((1 << symbol) - 1);
                                if (value < (1 << (symbol - 1))) value += 1 - (1 << symbol);
                            }
                            table->fast[slot] = (uint32_t)(uint16_t)(int16_t)value << 16 | (uint32_t)advance;
                        } else {
                            int run = symbol >> 4, size = symbol & 15;
                            int eob = symbol == 0;
                            int advance = length + size;
                            if (advance <= SKIP_BITS) {
                                int step = eob ? 0 : (size == 0 ? 16 : run + 1);   /* size 0, run 15: ZRL */
                                if (size == 0 && !eob && run != 15) continue;      /* invalid symbol: slow path */
                                int value = 0;
                                if (size) {   /* the value's bits follow the code within the slot */
                                    value = (slot >> (SKIP_BITS - advance)) & ((1 << size) - 1);
                                    if (value < (1 << (size - 1))) value += 1 - (1 << size);
                                }
                                table->fast[slot] = (uint32_t)(uint16_t)(int16_t)value << 16 | (uint32_t)step << 8 |
                                                    (uint32_t)eob << 5 | (uint32_t)advance;
                            }
                        }
                    }
                }
            }
            table->maxcode[length] = code - 1;
        } else {
            table->maxcode[length] = -1;
        }
        if (code > (1 << length)) return 0;   /* over-subscribed */
        code <<= 1;
    }
    table->maxcode[17] = 0x7FFFFFFF;
    table->defined = 1;
    return 1;
}

/* Fills `table->multi` from the canonical codes (after build_huffman). */
static void build_multi(struct huffman *table) {
    for (int prefix = 0; prefix < (1 << MULTI_BITS); prefix++) {
        int used = 0, steps = 0, eob = 0, count = 0;
        while (count < 3) {
            int left = MULTI_BITS - used;
            if (left <= 0) break;
            /* The next code, through the SKIP_BITS lookup (the bits after the prefix's end read as zeros). */
            int bits = (prefix << used) & ((1 << MULTI_BITS) - 1);
            uint16_t entry = table->lookup[bits >> (MULTI_BITS - SKIP_BITS)];
            int length = entry >> 8, symbol = entry & 0xFF;
            if (entry == 0 || length > left) break;
            int run = symbol >> 4, size = symbol & 15;
            if (symbol == 0) { used += length; eob = 1; count++; break; }
            if (size == 0 && run != 15) break;
            if (length + size > left) break;
            used += length + size;
            steps += size == 0 ? 16 : run + 1;
            count++;
        }
        table->multi[prefix] = !count ? MULTI_NONE : (uint16_t)(used | (eob ? MULTI_EOB + steps : steps) << 4);
    }
}

/* Fills the bit buffer to at least 57 bits, stopping at markers (then zeros are inserted, counted in `fake`). */
static inline void refill(struct bit_reader *r) {
    while (r->count <= 56) {
        if (r->pos + 8 <= r->size && r->fake == 0) {
            uint64_t word;
            memcpy(&word, r->data + r->pos, 8);
            /* No 0xFF byte among the next 8: take whole bytes at once. */
            uint64_t inverted = ~word;
            if (((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL) == 0) {
                /* The whole bytes that fit below the valid bits, in one shift of the word read big-endian;
                 * the bits of the byte that does not fit are cleared (the buffer is zero below `count`). */
                int take = (64 - r->count) >> 3;
                int filled = r->count + 8 * take;
                r->bits |= (__builtin_bswap64(word) >> r->count) & (~0ULL << (64 - filled));
                r->count = filled;
                r->pos += (size_t)take;
                continue;
            }
        }
        uint8_t byte = 0;
        if (r->fake == 0 && r->pos < r->size) {
            byte = r->data[r->pos];
            if (byte == 0xFF) {
                if (r->pos + 1 < r->size && r->data[r->pos + 1] == 0x00) {
                    r->pos += 2;
                } else {
                    byte = 0;   /* a marker: stop here */
                    r->fake += 8;
                }
            } else {
                r->pos++;
            }
        } else {
            r->fake += 8;
        }
        r->bits |= (uint64_t)byte << (56 - r->count);
        r->count += 8;
    }
}

static inline void consume(struct bit_reader *r, int n) { r->bits <<= n; r->count -= n; }

/* The next symbol of `table` (the buffer holds at least 16 bits), or -1 for a bad code. */
static inline int decode_symbol(struct bit_reader *r, const struct huffman *table) {
    uint16_t entry = table->lookup[r->bits >> (64 - SKIP_BITS)];
    if (entry) {
        consume(r, entry >> 8);
        return entry & 0xFF;
    }
    int length = SKIP_BITS + 1;
    int32_t code = (int32_t)(r->bits >> (64 - length));
    while (code > table->maxcode[length]) {
        length++;
        if (length > 16) return -1;
        code = (int32_t)(r->bits >> (64 - length));
    }
    consume(r, length);
    return table->values[(code + table->valoffset[length]) & 0xFF];
}

static inline int receive_extend(struct bit_reader *r, int size) {
    if (size == 0) return 0;
    int value = (int)(r->bits >> (64 - size));
    consume(r, size);
    return value < (1 << (size - 1)) ? value - (1 << size) + 1 : value;
}

/* A block's DC difference (the buffer holds at least 32 bits): 0 on a bad code. */
static inline int decode_dc(struct bit_reader *r, const struct huffman *dc, int *diff) {
    uint32_t entry = dc->fast[r->bits >> (64 - SKIP_BITS)];
    if (entry) {
        consume(r, (int)(entry & 31));
        *diff = (int16_t)(entry >> 16);
        return 1;
    }
    int s = decode_symbol(r, dc);
    if (s < 0 || s > 11) return 0;
    *diff = receive_extend(r, s);
    return 1;
}

/* Decodes one block: returns the DC difference through `diff`; 0 on a bad code. */
static inline int decode_block(struct bit_reader *r, const struct huffman *dc, const struct huffman *ac, int *diff) {
    if (r->count < 32) refill(r);
    if (!decode_dc(r, dc, diff)) return 0;
    for (int k = 1; k < 64;) {
        if (r->count < MULTI_BITS) refill(r);   /* a group takes at most MULTI_BITS */
        uint16_t several = ac->multi[r->bits >> (64 - MULTI_BITS)];
        int stepped = several >> 4;
        if (k + stepped <= 63) {   /* false for MULTI_NONE and for a group that ends the block */
            consume(r, several & 15);
            k += stepped;
            continue;
        }
        if (stepped >= MULTI_EOB && stepped < MULTI_NONE >> 4 && k + stepped - MULTI_EOB <= 63) {
            consume(r, several & 15);
            break;
        }
        if (r->count < 32) refill(r);   /* a code and its value take at most 32 */
        uint32_t entry = ac->fast[r->bits >> (64 - SKIP_BITS)];
        if (entry) {
            consume(r, (int)(entry & 31));
            if (entry & (1 << 5)) break;
            k += (int)((entry >> 8) & 31);
            continue;
        }
        int rs = decode_symbol(r, ac);
        if (rs < 0) return 0;
        int run = rs >> 4, size = rs & 15;
        if (size) {
            consume(r, size);
            k += run + 1;
        } else if (run == 15) {
            k += 16;
        } else {
            break;
        }
    }
    return 1;
}

/* libjpeg's zigzag order: natural index of the k-th coefficient (with 16 extra entries for corrupt runs). */
static const uint8_t natural_order[64 + 16] = {
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
    28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
    54, 47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

/* Decodes one block with its AC values into `coef` (natural order; all zero on entry), noting the natural
 * index of every value written in `written` (at most 63, one per symbol) so that the caller can zero them
 * again. Returns how many were written, or -1 on a bad code. */
static inline int decode_block_sparse(struct bit_reader *r, const struct huffman *dc, const struct huffman *ac, int *diff,
                                      int16_t coef[64], uint8_t written[64]) {
    if (r->count < 32) refill(r);
    if (!decode_dc(r, dc, diff)) return -1;
    int n = 0;
    for (int k = 1; k < 64;) {
        if (r->count < SKIP_BITS) refill(r);   /* a table entry takes at most SKIP_BITS */
        uint32_t entry = ac->fast[r->bits >> (64 - SKIP_BITS)];
        if (entry) {
            consume(r, (int)(entry & 31));
            if (entry & (1 << 5)) break;
            int value = (int16_t)(entry >> 16);
            k += (int)((entry >> 8) & 31);
            if (value) {   /* a run past the block lands on natural_order's padding (63), as in libjpeg */
                int at = natural_order[k - 1];
                coef[at] = (int16_t)value;
                written[n++] = (uint8_t)at;
            }
            continue;
        }
        if (r->count < 32) refill(r);   /* a code and its value take at most 32 */
        int rs = decode_symbol(r, ac);
        if (rs < 0) return -1;
        int run = rs >> 4, size = rs & 15;
        if (size) {
            k += run;
            int value = receive_extend(r, size);
            coef[natural_order[k]] = (int16_t)value;
            written[n++] = natural_order[k];
            k++;
        } else if (run == 15) {
            k += 16;
        } else {
            break;
        }
    }
    return n;
}

/* libjpeg's jpeg_idct_2x2 (jidctred.c, "islow" constants): a 2x2 output from coefficients in rows and
 * columns 0, 1, 3, 5, 7, dequantized by `q` (natural order). */
static void idct_2x2(const int16_t coef[64], const uint16_t q[64], uint8_t out[4]) {
    int32_t work[2][8];
    static const int columns[5] = {0, 1, 3, 5, 7};
    for (int i = 0; i < 5; i++) {
        int c = columns[i];
        int64_t tmp10 = (int64_t)(coef[c] * q[c]) * (1 << 15);
        int64_t tmp0 = (int64_t)(coef[56 + c] * q[56 + c]) * -5906 + (int64_t)(coef[40 + c] * q[40 + c]) * 6967 +
                       (int64_t)(coef[24 + c] * q[24 + c]) * -10426 + (int64_t)(coef[8 + c] * q[8 + c]) * 29692;
        work[0][c] = (int32_t)((tmp10 + tmp0 + (1 << 12)) >> 13);
        work[1][c] = (int32_t)((tmp10 - tmp0 + (1 << 12)) >> 13);
    }
    for (int row = 0; row < 2; row++) {
        const int32_t *w = work[row];
        int64_t tmp10 = (int64_t)w[0] * (1 << 15);
        int64_t tmp0 = (int64_t)w[7] * -5906 + (int64_t)w[5] * 6967 + (int64_t)w[3] * -10426 + (int64_t)w[1] * 29692;
        int a = (int)((tmp10 + tmp0 + (1 << 19)) >> 20) + 128, b = (int)((tmp10 - tmp0 + (1 << 19)) >> 20) + 128;
        out[row * 2] = (uint8_t)(a < 0 ? 0 : a > 255 ? 255 : a);
        out[row * 2 + 1] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
    }
}

static inline uint8_t clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* A block's pixel from its DC coefficient alone, as libjpeg's 1x1 inverse DCT gives it (and its 2x2 one, at
 * every pixel, for a block without AC values). */
static inline uint8_t dc_pixel(int dc, int quant) { return clamp255(((dc * quant + 4) >> 3) + 128); }

/* Reads the tables of a DQT segment (`n` bytes at `body`) into natural order. Returns 0 when malformed. */
/* Reads a DHT segment's tables into `tables` (DC 0-3, then AC 0-3 at 4-7). With `with_ac` 0 the AC tables
 * are only checked for their shape and `tables` needs room for the DC ones alone. 0 for a malformed
 * segment (a class over 1, an id over 3, more than 256 symbols, a length that disagrees, an invalid code). */
static int read_huffman_tables(const uint8_t *body, size_t n, struct huffman *tables, int with_ac) {
    size_t p = 0;
    while (p < n) {
        if (p + 17 > n) return 0;
        int cls = body[p] >> 4, id = body[p] & 15;
        if (cls > 1 || id > 3) return 0;
        int total = 0;
        for (int k = 0; k < 16; k++) total += body[p + 1 + k];
        if (total > 256 || p + 17 + (size_t)total > n) return 0;
        if (cls == 0 || with_ac) {
            if (!build_huffman(&tables[cls * 4 + id], body + p + 1, body + p + 17, total, cls)) return 0;
        }
        p += 17 + (size_t)total;
    }
    return 1;
}

/* Reads a frame header (SOF) of 8-bit samples with 1 or 3 components: the size, and each component's id,
 * sampling factors and quantization table. 0 for anything else (another precision, a zero size, a table
 * id over 3, a component id given twice, a length that disagrees), which the callers leave to libjpeg. */
static int read_frame(const uint8_t *body, size_t n, int *image_w, int *image_h, int *components,
                      int ids[3], int hs[3], int vs[3], int tq[3]) {
    if (n < 6 || body[0] != 8) return 0;
    *image_h = body[1] << 8 | body[2];
    *image_w = body[3] << 8 | body[4];
    *components = body[5];
    if (*image_w == 0 || *image_h == 0 || (*components != 1 && *components != 3) || n != 6 + 3 * (size_t)*components) return 0;
    for (int c = 0; c < *components; c++) {
        ids[c] = body[6 + 3 * c];
        hs[c] = body[7 + 3 * c] >> 4;
        vs[c] = body[7 + 3 * c] & 15;
        tq[c] = body[8 + 3 * c];
        if (tq[c] > 3) return 0;
        for (int d = 0; d < c; d++) if (ids[d] == ids[c]) return 0;
    }
    return 1;
}

static int read_quant_tables(const uint8_t *body, size_t n, uint16_t tables[4][64], int defined[4]) {
    size_t p = 0;
    while (p < n) {
        int precision = body[p] >> 4, id = body[p] & 15;
        if (id > 3 || precision > 1) return 0;
        size_t bytes = precision ? 128 : 64;
        if (p + 1 + bytes > n) return 0;
        for (int k = 0; k < 64; k++)
            tables[id][natural_order[k]] = (uint16_t)(precision ? (body[p + 1 + 2 * k] << 8 | body[p + 2 + 2 * k]) : body[p + 1 + k]);
        defined[id] = 1;
        p += 1 + bytes;
    }
    return 1;
}

/* One BGRA pixel from Y, Cb and Cr: libjpeg's ycc_rgb_convert in 16-bit fixed point. */
static inline void ycc_pixel(int Y, int cb, int cr, uint8_t *o) {
    int b = cb - 128, r = cr - 128;
    int red = Y + ((91881 * r + 32768) >> 16);
    int green = Y + ((-22554 * b + 32768 - 46802 * r) >> 16);
    int blue = Y + ((116130 * b + 32768) >> 16);
    o[0] = clamp255(blue); o[1] = clamp255(green); o[2] = clamp255(red); o[3] = 255;
}

/* Writes `out_w` x `out_h` gray or BGRA pixels from the component planes (bytes, rows `plane_w[c]` apart).
 * Chroma column x / `chroma_step` serves luma column x (2 for 4:2:2, whose chroma libjpeg repeats across at
 * this scale; 1 when the chroma planes are as wide as luma's); colours by ycc_pixel. */
static void write_pixels(int format, int components, uint8_t *const planes[3], const int plane_w[3], int chroma_step,
                         int out_w, int out_h, uint8_t *pixels, size_t pitch) {
    for (int y = 0; y < out_h; y++) {
        const uint8_t *luma = planes[0] + (size_t)y * (size_t)plane_w[0];
        uint8_t *o = pixels + (size_t)y * pitch;
        if (format == TESSERA_JPEG_GRAY) { memcpy(o, luma, (size_t)out_w); continue; }
        if (components == 1) {
            for (int x = 0; x < out_w; x++) { o[4 * x] = o[4 * x + 1] = o[4 * x + 2] = luma[x]; o[4 * x + 3] = 255; }
            continue;
        }
        const uint8_t *cb = planes[1] + (size_t)y * (size_t)plane_w[1], *cr = planes[2] + (size_t)y * (size_t)plane_w[2];
        if (chroma_step == 1) {
            for (int x = 0; x < out_w; x++) ycc_pixel(luma[x], cb[x], cr[x], o + 4 * x);
        } else {
            for (int x = 0; x < out_w; x++) ycc_pixel(luma[x], cb[x >> 1], cr[x >> 1], o + 4 * x);
        }
    }
}

static int decode_progressive_dc(const uint8_t *data, size_t size, int format, uint8_t *pixels, size_t pitch, int width,
                                 int height);

int tessera_jpeg_decode_dc(const uint8_t *data, size_t size, int format, uint8_t *pixels, size_t pitch, int width,
                           int height) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8 || (format != TESSERA_JPEG_BGRA && format != TESSERA_JPEG_GRAY))
        return TESSERA_JPEG_UNSUPPORTED;
    if (tessera_jpeg_is_progressive(data, size)) return decode_progressive_dc(data, size, format, pixels, pitch, width, height);
    int quant[4] = {0, 0, 0, 0}, quant_defined[4] = {0, 0, 0, 0};
    uint16_t quant_tables[4][64];   /* natural order */
    struct huffman *tables = malloc(8 * sizeof(struct huffman));   /* DC 0-3, AC 0-3 */
    if (!tables) return TESSERA_JPEG_UNSUPPORTED;
    for (int t = 0; t < 8; t++) tables[t].defined = 0;
    int result = TESSERA_JPEG_UNSUPPORTED;
    int image_w = 0, image_h = 0, components = 0, restart_interval = 0, adobe_rgb = 0, adobe_unknown = 0;
    int ids[3] = {0, 0, 0}, hs[3] = {0, 0, 0}, vs[3] = {0, 0, 0}, tq[3] = {0, 0, 0};
    int dc_sel[3] = {0, 0, 0}, ac_sel[3] = {0, 0, 0};
    uint8_t *planes[3] = {NULL, NULL, NULL};
    size_t i = 2;
    int scan_found = 0;

    while (!scan_found) {
        while (i < size && data[i] == 0xFF && i + 1 < size && data[i + 1] == 0xFF) i++;   /* fill bytes */
        if (i + 4 > size || data[i] != 0xFF) goto done;
        uint8_t marker = data[i + 1];
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2 || i + 2 + length > size) goto done;
        const uint8_t *body = data + i + 4;
        size_t n = length - 2;
        switch (marker) {
        case 0xDB:   /* DQT */
            if (!read_quant_tables(body, n, quant_tables, quant_defined)) goto done;
            for (int id = 0; id < 4; id++) if (quant_defined[id]) quant[id] = quant_tables[id][0];
            break;
        case 0xC4:   /* DHT */
            if (!read_huffman_tables(body, n, tables, 1)) goto done;
            break;
        case 0xC0: case 0xC1: {   /* baseline / extended sequential, Huffman */
            if (components || !read_frame(body, n, &image_w, &image_h, &components, ids, hs, vs, tq)) goto done;
            break;
        }
        case 0xC2: case 0xC3: case 0xC5: case 0xC6: case 0xC7: case 0xC9: case 0xCA: case 0xCB:
        case 0xCD: case 0xCE: case 0xCF:
            goto done;   /* progressive, lossless, hierarchical or arithmetic */
        case 0xDD:   /* DRI */
            if (n != 2) goto done;
            restart_interval = body[0] << 8 | body[1];
            break;
        case 0xEE:   /* APP14: Adobe transform 0 means RGB, 1 YCbCr; libjpeg warns about the others */
            if (n >= 12 && memcmp(body, "Adobe", 5) == 0) {
                if (body[11] == 0) adobe_rgb = 1;
                else if (body[11] != 1) adobe_unknown = 1;
            }
            break;
        case 0xE0:   /* APP0: libjpeg warns about a JFIF version other than 1.x; left to it */
            if (n >= 14 && memcmp(body, "JFIF", 5) == 0 && body[5] != 1) goto done;
            break;
        case 0xDA: {   /* SOS */
            if (!components || n < 1) goto done;
            int ns = body[0];
            if (ns != components || n != 4 + 2 * (size_t)ns) goto done;
            for (int c = 0; c < ns; c++) {
                if (body[1 + 2 * c] != ids[c]) goto done;
                dc_sel[c] = body[2 + 2 * c] >> 4;
                ac_sel[c] = body[2 + 2 * c] & 15;
                if (dc_sel[c] > 3 || ac_sel[c] > 3 || !tables[dc_sel[c]].defined || !tables[4 + ac_sel[c]].defined) goto done;
            }
            if (body[1 + 2 * ns] != 0 || body[2 + 2 * ns] != 63 || body[3 + 2 * ns] != 0) goto done;
            scan_found = 1;
            break;
        }
        case 0xD8: case 0xD9: case 0x01:
            goto done;
        default:
            if (marker >= 0xD0 && marker <= 0xD7) goto done;
            break;   /* APPn, COM and the rest: skipped */
        }
        i += 2 + length;
    }

    if (components == 3) {
        if (adobe_rgb || adobe_unknown || (ids[0] == 'R' && ids[1] == 'G' && ids[2] == 'B')) goto done;
        if (hs[0] < 1 || hs[0] > 2 || vs[0] < 1 || vs[0] > 2) goto done;
        if (hs[1] != 1 || vs[1] != 1 || hs[2] != 1 || vs[2] != 1) goto done;
        if (vs[0] == 2 && hs[0] == 1) goto done;   /* 4:4:0: left to libjpeg */
    } else {
        hs[0] = vs[0] = 1;   /* a single-component scan is not interleaved: one block per MCU */
    }
    for (int c = 0; c < components; c++) if (!quant_defined[tq[c]]) goto done;
    int out_w = (image_w + 7) / 8, out_h = (image_h + 7) / 8;
    if (out_w != width || out_h != height) goto done;

    int max_h = hs[0], max_v = vs[0];
    int mcus_x = (image_w + 8 * max_h - 1) / (8 * max_h), mcus_y = (image_h + 8 * max_v - 1) / (8 * max_v);
    /* 4:2:0: libjpeg gives chroma a 2x2 inverse DCT at this scale (no upsampling); 4:2:2: DC values
     * repeated across (libjpeg does no fancy upsampling when the DCT is scaled to 1x1). */
    int chroma_2x2 = components == 3 && max_h == 2 && max_v == 2;
    int plane_w[3], plane_h[3];
    for (int c = 0; c < components; c++) {
        plane_w[c] = mcus_x * (chroma_2x2 ? 2 : hs[c]);
        plane_h[c] = mcus_y * (chroma_2x2 ? 2 : vs[c]);
        planes[c] = malloc((size_t)plane_w[c] * (size_t)plane_h[c]);
        if (!planes[c]) goto done;
    }

    /* The blocks of one MCU in scan order: component, tables, and where the block's pixel lies from the
     * MCU's corner in its plane. A 4:2:0 chroma block has its values decoded and writes a 2x2 square
     * there; the others keep their DC value and skip their AC symbols, so their AC table gets its
     * multi-symbol entries (once). */
    int block_count = 0, block_c[6], multi_built[4] = {0, 0, 0, 0};
    size_t block_offset[6];
    const struct huffman *block_dc[6], *block_ac[6];
    for (int c = 0; c < components; c++) {
        int values = c > 0 && chroma_2x2;
        if (!values && !multi_built[ac_sel[c]]) {
            build_multi(&tables[4 + ac_sel[c]]);
            multi_built[ac_sel[c]] = 1;
        }
        int rows = values ? 1 : vs[c], columns = values ? 1 : hs[c];
        for (int by = 0; by < rows; by++)
            for (int bx = 0; bx < columns; bx++) {
                block_c[block_count] = c;
                block_offset[block_count] = (size_t)by * (size_t)plane_w[c] + (size_t)bx;
                block_dc[block_count] = &tables[dc_sel[c]];
                block_ac[block_count] = &tables[4 + ac_sel[c]];
                block_count++;
            }
    }
    /* Plane pixels per MCU across and per MCU row down. */
    int step_x[3], step_y[3];
    for (int c = 0; c < components; c++) {
        step_x[c] = chroma_2x2 ? 2 : hs[c];
        step_y[c] = (chroma_2x2 ? 2 : vs[c]) * plane_w[c];
    }

    struct bit_reader reader = {data, size, i, 0, 0, 0};
    int predictions[3] = {0, 0, 0};
    int16_t coef[64];      /* a 4:2:0 chroma block's coefficients, zero between blocks */
    uint8_t written[64];   /* where its AC values went */
    memset(coef, 0, sizeof coef);
    long restarts_left = restart_interval;
    int next_restart = 0;
    for (int my = 0; my < mcus_y; my++) {
        uint8_t *corner[3];
        for (int c = 0; c < components; c++) corner[c] = planes[c] + (size_t)my * (size_t)step_y[c];
        for (int mx = 0; mx < mcus_x; mx++) {
            if (restart_interval) {
                if (restarts_left == 0) {
                    /* Padding bits only, then the expected RSTn marker. */
                    if (reader.count - reader.fake >= 8) goto done;
                    size_t p = reader.pos;
                    while (p + 1 < size && data[p] == 0xFF && data[p + 1] == 0xFF) p++;
                    if (p + 1 >= size || data[p] != 0xFF || data[p + 1] != 0xD0 + next_restart) goto done;
                    reader.pos = p + 2;
                    reader.bits = 0; reader.count = 0; reader.fake = 0;
                    predictions[0] = predictions[1] = predictions[2] = 0;
                    next_restart = (next_restart + 1) & 7;
                    restarts_left = restart_interval;
                }
                restarts_left--;
            }
            for (int b = 0; b < block_count; b++) {
                int c = block_c[b], diff;
                uint8_t *o = corner[c] + block_offset[b];
                if (c > 0 && chroma_2x2) {   /* the blocks whose values are decoded, as above */
                    int n = decode_block_sparse(&reader, block_dc[b], block_ac[b], &diff, coef, written);
                    if (n < 0) goto done;
                    predictions[c] += diff;
                    if (predictions[c] > 32767 || predictions[c] < -32767) goto done;   /* not a real DC value */
                    if (n == 0) {
                        /* No AC value: the 2x2 inverse DCT gives every pixel (DC x Q + 4) >> 3, + 128. */
                        o[0] = o[1] = o[plane_w[c]] = o[plane_w[c] + 1] =
                            dc_pixel(predictions[c], quant[tq[c]]);
                        continue;
                    }
                    uint8_t square[4];
                    coef[0] = (int16_t)predictions[c];
                    idct_2x2(coef, quant_tables[tq[c]], square);
                    o[0] = square[0]; o[1] = square[1]; o[plane_w[c]] = square[2]; o[plane_w[c] + 1] = square[3];
                    for (int w = 0; w < n; w++) coef[written[w]] = 0;
                    coef[0] = 0;
                    continue;
                }
                if (!decode_block(&reader, block_dc[b], block_ac[b], &diff)) goto done;
                predictions[c] += diff;
                if (predictions[c] > 32767 || predictions[c] < -32767) goto done;   /* not a real DC value */
                *o = dc_pixel(predictions[c], quant[tq[c]]);
            }
            for (int c = 0; c < components; c++) corner[c] += step_x[c];
            if (reader.count < reader.fake) goto done;   /* read past the data: truncated or damaged */
        }
    }
    /* The scan must end here and be followed by EOI (anything else is left to libjpeg). */
    if (reader.count - reader.fake >= 8) goto done;
    {
        size_t p = reader.pos;
        while (p + 1 < size && data[p] == 0xFF && data[p + 1] == 0xFF) p++;
        if (p + 1 >= size || data[p] != 0xFF || data[p + 1] != 0xD9) goto done;
    }

    /* 4:2:2: each chroma value covers two luma columns; 4:2:0 chroma planes are as wide as luma's. */
    write_pixels(format, components, planes, plane_w, components == 3 && max_h == 2 && !chroma_2x2 ? 2 : 1, out_w, out_h,
                 pixels, pitch);
    result = TESSERA_JPEG_OK;

done:
    for (int c = 0; c < 3; c++) free(planes[c]);
    free(tables);
    return result;
}

/* The end of the entropy-coded data starting at `i`: the offset of the next marker that is neither a
 * stuffed zero nor a restart marker (fill bytes before it skipped), or `size` when there is none. */
static size_t entropy_end(const uint8_t *data, size_t size, size_t i) {
    while (i + 1 < size) {
        const uint8_t *ff = memchr(data + i, 0xFF, size - i - 1);
        if (!ff) return size;
        i = (size_t)(ff - data);
        uint8_t next = data[i + 1];
        if (next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF) { i += next == 0xFF ? 1 : 2; continue; }
        return i;
    }
    return size;
}

/* Reads to the end of a restart interval: only padding bits may be left, then RSTn (`*next` counts them
 * modulo 8). Returns 0 when anything else is there. */
static int take_restart(struct bit_reader *r, const uint8_t *data, size_t size, int *next) {
    if (r->count - r->fake >= 8) return 0;
    size_t p = r->pos;
    while (p + 1 < size && data[p] == 0xFF && data[p + 1] == 0xFF) p++;
    if (p + 1 >= size || data[p] != 0xFF || data[p + 1] != 0xD0 + *next) return 0;
    r->pos = p + 2;
    r->bits = 0; r->count = 0; r->fake = 0;
    *next = (*next + 1) & 7;
    return 1;
}

/* Progressive JPEG at 1/8 scale from its DC scans alone.
 *
 * When every component is reduced to its DC coefficient at this scale (gray, 4:4:4 and 4:2:2: libjpeg keeps
 * a 2x2 inverse DCT only for chroma subsampled both ways), the AC scans change no output pixel: libjpeg's
 * own path (tessera_jpeg.c) leaves them out of its input for that reason. This decoder skips them without
 * reading them and decodes the DC scans (first scans and successive-approximation refinements) into one
 * coefficient per block, instead of libjpeg's whole-image coefficient arrays (64 per block, zeroed before
 * the first scan). Pixels are libjpeg's: (DC x Q + 4) >> 3, + 128 (the quantization table in force at the
 * component's first scan, as libjpeg latches it), 4:2:2 chroma repeated across, libjpeg's colours. Anything
 * else (4:2:0, 4:4:0, other sampling, 12-bit or arithmetic coding, a bogus progression, damaged or truncated
 * data, more than 500 scans, headers libjpeg warns about) returns TESSERA_JPEG_UNSUPPORTED, and the caller
 * decodes with libjpeg. */
static int decode_progressive_dc(const uint8_t *data, size_t size, int format, uint8_t *pixels, size_t pitch, int width,
                                 int height) {
    uint16_t quant_tables[4][64];
    int quant_defined[4] = {0, 0, 0, 0};
    struct huffman *tables = malloc(4 * sizeof(struct huffman));   /* DC tables 0-3; AC tables are never needed */
    if (!tables) return TESSERA_JPEG_UNSUPPORTED;
    for (int t = 0; t < 4; t++) tables[t].defined = 0;
    int result = TESSERA_JPEG_UNSUPPORTED;
    int image_w = 0, image_h = 0, components = 0, restart_interval = 0, scans = 0;
    int ids[3] = {0, 0, 0}, hs[3] = {0, 0, 0}, vs[3] = {0, 0, 0}, tq[3] = {0, 0, 0};
    int quant[3] = {0, 0, 0}, dc_seen[3] = {0, 0, 0}, dc_bits[3] = {0, 0, 0};   /* dc_bits: Al of the last DC scan */
    int mcus_x = 0, mcus_y = 0, plane_w[3] = {0, 0, 0}, plane_h[3] = {0, 0, 0};
    int16_t *dc[3] = {NULL, NULL, NULL};
    uint8_t *planes[3] = {NULL, NULL, NULL};
    size_t i = 2;

    for (;;) {
        while (i + 1 < size && data[i] == 0xFF && data[i + 1] == 0xFF) i++;   /* fill bytes */
        if (i + 2 > size || data[i] != 0xFF) goto done;
        uint8_t marker = data[i + 1];
        if (marker == 0xD9) break;   /* EOI */
        if (i + 4 > size) goto done;
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2 || i + 2 + length > size) goto done;
        const uint8_t *body = data + i + 4;
        size_t n = length - 2;
        switch (marker) {
        case 0xDB:   /* DQT */
            if (!read_quant_tables(body, n, quant_tables, quant_defined)) goto done;
            break;
        case 0xC4:   /* DHT: DC tables are built, AC tables only checked for their shape */
            if (!read_huffman_tables(body, n, tables, 0)) goto done;
            break;
        case 0xC2: {   /* progressive, Huffman */
            if (components || !read_frame(body, n, &image_w, &image_h, &components, ids, hs, vs, tq)) goto done;
            if (components == 3) {
                /* 4:4:4 or 4:2:2 (h2v1) with 1x1 chroma: every component keeps only its DC at 1/8. */
                if (hs[0] < 1 || hs[0] > 2 || vs[0] != 1 || hs[1] != 1 || vs[1] != 1 || hs[2] != 1 || vs[2] != 1) goto done;
                if (ids[0] == 'R' && ids[1] == 'G' && ids[2] == 'B') goto done;   /* libjpeg takes these as RGB */
            } else {
                hs[0] = vs[0] = 1;   /* a single component is never interleaved: one block per MCU */
            }
            if ((image_w + 7) / 8 != width || (image_h + 7) / 8 != height) goto done;
            mcus_x = (image_w + 8 * hs[0] - 1) / (8 * hs[0]);
            mcus_y = (image_h + 7) / 8;
            for (int c = 0; c < components; c++) {
                plane_w[c] = mcus_x * hs[c];
                plane_h[c] = mcus_y * vs[c];
                dc[c] = calloc((size_t)plane_w[c] * (size_t)plane_h[c], sizeof(int16_t));
                if (!dc[c]) goto done;
            }
            break;
        }
        case 0xC0: case 0xC1: case 0xC3: case 0xC5: case 0xC6: case 0xC7: case 0xC9: case 0xCA: case 0xCB:
        case 0xCD: case 0xCE: case 0xCF:
            goto done;   /* another frame type */
        case 0xDD:   /* DRI */
            if (n != 2) goto done;
            restart_interval = body[0] << 8 | body[1];
            break;
        case 0xEE:   /* APP14: only Adobe transform 1 (YCbCr) for colour, 0 or 1 for gray (libjpeg warns about others) */
            if (n >= 12 && memcmp(body, "Adobe", 5) == 0 && body[11] != 1 && !(body[11] == 0 && components != 3)) goto done;
            break;
        case 0xE0:   /* APP0: libjpeg warns about a JFIF version other than 1.x */
            if (n >= 14 && memcmp(body, "JFIF", 5) == 0 && body[5] != 1) goto done;
            break;
        case 0xDA: {   /* SOS */
            if (!components || n < 1 || ++scans > 500) goto done;
            int ns = body[0];
            if (ns < 1 || ns > components || n != 4 + 2 * (size_t)ns) goto done;
            int in_scan[3], sel[3];
            for (int k = 0; k < ns; k++) {
                int c = 0;
                while (c < components && ids[c] != body[1 + 2 * k]) c++;
                if (c == components) goto done;
                for (int d = 0; d < k; d++) if (in_scan[d] == c) goto done;
                in_scan[k] = c;
                sel[k] = body[2 + 2 * k] >> 4;
            }
            int ss = body[1 + 2 * ns], se = body[2 + 2 * ns], ah = body[3 + 2 * ns] >> 4, al = body[3 + 2 * ns] & 15;
            size_t start = i + 2 + length, end = entropy_end(data, size, start);
            if (end >= size) goto done;   /* no marker after the scan: truncated */
            if (ss > 0) {
                /* An AC scan: one component, a valid band; its coefficients change no pixel at this scale. */
                if (ns != 1 || se < ss || se > 63 || al > 13 || (ah != 0 && ah != al + 1) || !dc_seen[in_scan[0]]) goto done;
                i = end;
                continue;
            }
            if (se != 0 || al > 13 || (ah != 0 && ah != al + 1)) goto done;
            for (int k = 0; k < ns; k++) {
                int c = in_scan[k];
                /* A first DC scan once per component; each refinement adds the next lower bit. */
                if (ah == 0 ? dc_seen[c] : (!dc_seen[c] || dc_bits[c] != ah)) goto done;
                if (ah == 0) {
                    if (sel[k] > 3 || !tables[sel[k]].defined || !quant_defined[tq[c]]) goto done;
                    quant[c] = quant_tables[tq[c]][0];   /* latched at the component's first scan, as libjpeg does */
                }
                dc_seen[c] = 1;
                dc_bits[c] = al;
            }
            /* Interleaved scans walk MCUs (each component's h x v blocks); a one-component scan walks that
             * component's own blocks, ceil(width x h / max_h / 8) x ceil(height x v / max_v / 8). */
            int interleaved = ns > 1;
            long units;
            int unit_w = 0;
            if (interleaved) {
                units = (long)mcus_x * mcus_y;
            } else {
                int c = in_scan[0];
                unit_w = ((image_w * hs[c] + hs[0] - 1) / hs[0] + 7) / 8;
                units = (long)unit_w * (((image_h * vs[c] + vs[0] - 1) / vs[0] + 7) / 8);
            }
            struct bit_reader reader = {data, end, start, 0, 0, 0};
            int predictions[3] = {0, 0, 0}, next_restart = 0;
            long restarts_left = restart_interval;
            for (long u = 0; u < units; u++) {
                if (restart_interval) {
                    if (restarts_left == 0) {
                        if (!take_restart(&reader, data, end, &next_restart)) goto done;
                        predictions[0] = predictions[1] = predictions[2] = 0;
                        restarts_left = restart_interval;
                    }
                    restarts_left--;
                }
                for (int k = 0; k < ns; k++) {
                    int c = in_scan[k];
                    int bw = interleaved ? hs[c] : 1, bh = interleaved ? vs[c] : 1;
                    int x0 = interleaved ? (int)(u % mcus_x) * hs[c] : (int)(u % unit_w);
                    int y0 = interleaved ? (int)(u / mcus_x) * vs[c] : (int)(u / unit_w);
                    for (int by = 0; by < bh; by++) {
                        for (int bx = 0; bx < bw; bx++) {
                            int16_t *coef = &dc[c][(size_t)(y0 + by) * (size_t)plane_w[c] + (size_t)(x0 + bx)];
                            if (reader.count < 32) refill(&reader);
                            if (ah == 0) {
                                int s = decode_symbol(&reader, &tables[sel[k]]);
                                if (s < 0 || s > 11) goto done;
                                predictions[c] += receive_extend(&reader, s);
                                long value = (long)predictions[c] * (1L << al);
                                if (value > 32767 || value < -32767) goto done;   /* not a real DC value */
                                *coef = (int16_t)value;
                            } else {
                                if (reader.bits >> 63) *coef = (int16_t)(*coef | (1 << al));
                                consume(&reader, 1);
                            }
                        }
                    }
                }
                if (reader.count < reader.fake) goto done;   /* read past the data: truncated or damaged */
            }
            /* Only padding bits may be left before the marker that ends the scan. */
            if (reader.count - reader.fake >= 8 || reader.pos != end) goto done;
            i = end;
            continue;
        }
        case 0xD8: case 0x01: case 0xDC:
            goto done;
        default:
            if (marker >= 0xD0 && marker <= 0xD7) goto done;
            break;   /* APPn, COM and the rest: skipped */
        }
        i += 2 + length;
    }
    if (!components) goto done;
    for (int c = 0; c < components; c++) {
        if (!dc_seen[c]) goto done;   /* a component without DC data: left to libjpeg */
        planes[c] = malloc((size_t)plane_w[c] * (size_t)plane_h[c]);
        if (!planes[c]) goto done;
        for (size_t k = 0; k < (size_t)plane_w[c] * (size_t)plane_h[c]; k++)
            planes[c][k] = dc_pixel(dc[c][k], quant[c]);
    }
    write_pixels(format, components, planes, plane_w, components == 3 && hs[0] == 2 ? 2 : 1, width, height, pixels, pitch);
    result = TESSERA_JPEG_OK;

done:
    for (int c = 0; c < 3; c++) {
        free(dc[c]);
        free(planes[c]);
    }
    free(tables);
    return result;
}
