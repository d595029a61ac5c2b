#ifndef TESSERA_JPEG_H
#define TESSERA_JPEG_H

#include <stddef.h>
#include <stdint.h>

/* libjpeg's own API behind plain C calls: every libjpeg error longjmps back into these functions,
 * never through a caller's frames. Used where TurboJPEG's API falls short: subsamplings it cannot
 * name (4:1:0, 4:1:1, 4:4:0 …) and progressive files decoded at 1/8 scale, where the AC scans of
 * the components libjpeg reduces to their DC coefficient are left out of the input. */

#define TESSERA_JPEG_MESSAGE_LENGTH 200

/* Results of the calls below. */
enum {
    TESSERA_JPEG_OK = 0,
    TESSERA_JPEG_ERROR = 1,    /* libjpeg failed; `message` says why */
    TESSERA_JPEG_WARNING = 2,  /* decoded, but libjpeg warned (not about extraneous bytes); `message` has the first warning */
    TESSERA_JPEG_UNSUPPORTED = 3   /* tessera_jpeg_decode_dc declined the file: decode it another way */
};

/* Colour spaces reported by the header (libjpeg's J_COLOR_SPACE values for these). */
enum {
    TESSERA_JPEG_CS_UNKNOWN = 0, TESSERA_JPEG_CS_GRAY = 1, TESSERA_JPEG_CS_RGB = 2, TESSERA_JPEG_CS_YCBCR = 3,
    TESSERA_JPEG_CS_CMYK = 4, TESSERA_JPEG_CS_YCCK = 5
};

/* Output pixel formats. */
enum { TESSERA_JPEG_BGRA = 0, TESSERA_JPEG_GRAY = 1, TESSERA_JPEG_CMYK = 2 };

typedef struct {
    int width;
    int height;
    int color_space;   /* TESSERA_JPEG_CS_* */
    int progressive;   /* 1 for a progressive (SOF2) frame */
} tessera_jpeg_header;

/* What tessera_jpeg_decode saw besides pixels. */
typedef struct {
    int warnings;       /* libjpeg warnings, "extraneous bytes before marker" included */
    int extraneous;     /* of which "extraneous bytes before marker" */
    int truncated;      /* the data ran out before the image did ("Premature end of JPEG file") */
    int decoded_rows;   /* output rows that came from data (all of them unless `truncated`); the rows
                         * below may hold anything and are for the caller to fill */
} tessera_jpeg_report;

/* Reads the header (up to the first scan). */
int tessera_jpeg_read_header(const uint8_t *data, size_t size, tessera_jpeg_header *header,
                             char message[TESSERA_JPEG_MESSAGE_LENGTH]);

/* Decodes at scale `scale_num`/`scale_denom` into `width` x `height` pixels of `format`, rows `pitch`
 * bytes apart. The scaled size libjpeg computes must equal `width` x `height`. Rejects files with more
 * than 500 scans. With `skip_unneeded_scans`, a progressive file decoded at a scale where a component
 * keeps only its DC coefficient has that component's AC scans removed from the input first (the
 * output is the same: block smoothing is off, and a 1x1 inverse DCT reads only the DC coefficient).
 *
 * Warnings never stop the decode: libjpeg's pixels are kept and `report` counts them. When the data
 * runs out, `report->truncated` is set and `report->decoded_rows` is the number of output rows
 * (of the scaled image) that came from data: the rows above the iMCU row being read when the data
 * ended (that row is only partly decoded: Chromium does not draw it, the caller fills it), for a progressive file the rows
 * whose every component had received its first DC scan (all rows once every component had). A
 * single-scan file stops decoding there. When libjpeg fails after the data ran out (a file cut inside
 * a marker segment between scans), the file is decoded again up to the start of that segment.
 * Returns TESSERA_JPEG_ERROR (nothing usable, `message` says why), TESSERA_JPEG_WARNING (decoded;
 * `message` has the first warning other than extraneous bytes) or TESSERA_JPEG_OK. */
int tessera_jpeg_decode(const uint8_t *data, size_t size, int scale_num, int scale_denom, int format,
                        uint8_t *pixels, size_t pitch, int width, int height, int skip_unneeded_scans,
                        tessera_jpeg_report *report, char message[TESSERA_JPEG_MESSAGE_LENGTH]);

/* A baseline (Huffman, 8-bit, one interleaved scan) gray or YCbCr file with 1x1 chroma at 1/8 scale,
 * from the DC coefficients only (AC symbols are skipped, never decoded to values), into `width` x
 * `height` (= ceil(w / 8) x ceil(h / 8)) BGRA or gray pixels, computed as libjpeg-turbo computes them
 * at this scale (1x1 inverse DCT for luma, 2x2 for 4:2:0 chroma, no fancy upsampling). Returns
 * TESSERA_JPEG_UNSUPPORTED for any other file, for damaged or truncated data and for headers libjpeg
 * warns about (bytes between segments, a JFIF version other than 1.x, an unknown Adobe transform):
 * the caller then decodes with libjpeg, which reports the damage. */
int tessera_jpeg_decode_dc(const uint8_t *data, size_t size, int format, uint8_t *pixels, size_t pitch, int width,
                           int height);

/* Whether the first frame header (SOFn marker) of `data` is progressive Huffman (SOF2). */
int tessera_jpeg_is_progressive(const uint8_t *data, size_t size);

#endif
