#ifndef TESSERA_PNG_H
#define TESSERA_PNG_H

#include <stddef.h>
#include <stdint.h>

/* A fast path for the common PNGs (8- and 16-bit gray, gray+alpha, RGB, RGBA, 8-bit palette, not interlaced,
 * no gamma other than sRGB's): the chunks are checked (CRCs of the critical ones), the image data is
 * inflated in one call with libdeflate, each row is unfiltered and turned into premultiplied BGRA,
 * and `factor` x `factor` blocks are averaged on the fly (a box filter), so the full-size image is
 * never stored as pixels. Anything else — other formats, damaged or truncated files, trailing image
 * data — returns TESSERA_PNG_UNSUPPORTED, and the caller decodes with libpng, which reports the
 * precise error. */

enum {
    TESSERA_PNG_OK = 0,
    TESSERA_PNG_UNSUPPORTED = 1,   /* not for the fast path: decode with libpng */
    TESSERA_PNG_NO_MEMORY = 2
};

/* Decodes `data` reduced by `factor` (each output pixel is the mean of a factor x factor block; the
 * last row and column of blocks may be partial) into premultiplied BGRA pixels, `out_width` x
 * `out_height` (which must be ceil(width / factor) x ceil(height / factor)), rows `pitch` bytes apart. */
int tessera_png_decode_reduced(const uint8_t *data, size_t size, int factor, uint8_t *pixels, size_t pitch,
                               int out_width, int out_height);

/* Box-reduces premultiplied BGRA `src` (`width` x `height`, rows `src_pitch` apart) by `factor` into
 * `dst` (ceil(width / factor) x ceil(height / factor), rows `dst_pitch` apart). Returns 0, or
 * TESSERA_PNG_NO_MEMORY. */
int tessera_box_reduce_bgra(const uint8_t *src, size_t src_pitch, int width, int height, int factor, uint8_t *dst,
                            size_t dst_pitch);

/* A PNG whose data ends early (or breaks off with an error) rebuilt as a complete one: the samples of the
 * rows that libpng's progressive reader delivered (as Chromium's incremental decoder reads them), and zero
 * samples for every other row, in an uncompressed zlib stream after the file's own chunks before IDAT.
 * Decoding `file` gives the pixels of the rows that arrived exactly as a decode of the whole file would. */
struct tessera_png_salvage {
    uint8_t *file;                /* the rebuilt PNG (malloc'd; tessera_png_salvage_free releases it) */
    size_t file_size;
    int interlaced;               /* Adam7 */
    uint32_t width, height;
    uint32_t received_rows[7];    /* rows of each pass that arrived (only [0] for a file that is not interlaced) */
    /* Rows with pixels of their own: the rows received (not interlaced); for Adam7, every row once the first
     * pass is complete, otherwise the 8 rows each first-pass row stands for (at 1/8 resolution). */
    uint32_t arrived_rows;
};

/* Fills `result` (TESSERA_PNG_OK), or returns TESSERA_PNG_UNSUPPORTED (no usable header, no IDAT) or
 * TESSERA_PNG_NO_MEMORY. */
int tessera_png_salvage(const uint8_t *data, size_t size, struct tessera_png_salvage *result);

void tessera_png_salvage_free(struct tessera_png_salvage *result);

/* Completes a full-size BGRA decode of `salvage->file` (4-byte pixels as little-endian words, rows `pitch`
 * apart): every pixel that did not arrive takes the value of the pixel standing for it in the latest pass
 * that did (Adam7 blocks: 8x8 for the first pass ... 1x2 for the sixth, as libpng's progressive display
 * rows), and `fill` where no pass covers it yet (rows below the first pass; rows after the last received
 * one when not interlaced). */
void tessera_png_fill_missing(uint8_t *pixels, size_t pitch, const struct tessera_png_salvage *salvage, uint32_t fill);

#endif
