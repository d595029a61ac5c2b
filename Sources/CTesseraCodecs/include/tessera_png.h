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

#endif
