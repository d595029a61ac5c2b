/* The C codec paths of the library (Sources/CTesseraCodecs) alone, as thumbnail ingest at EDGE px runs
 * them, for profiling with callgrind (the Swift `tessera` binary does not run under valgrind 3.19) and
 * for checking that a change keeps every pixel: each file's output is printed as a hash.
 *
 *   cc -O2 -I Sources/CTesseraCodecs/include Sources/CTesseraCodecs/*.c Tools/Profiling/codec-profile.c \
 *      -ljpeg -ldeflate -lpng -o /tmp/codec-profile
 *   valgrind --tool=callgrind /tmp/codec-profile jpeg 100 ../shared/corpus/photos/*.jpg
 *   /tmp/codec-profile png 100 ../shared/corpus/photos/*.png
 *
 * jpeg: files whose 1/8 scale covers an EDGE x EDGE aspect fill, through the DC-only decoder
 * (tessera_jpeg_decode_dc) or, when it declines, the libjpeg shim with unneeded scans left out
 * (tessera_jpeg_decode), as JPEGDecoder does; other files are skipped (TurboJPEG decodes them).
 * png: the fast path (tessera_png_decode_reduced) at the factor PNGDecoder picks (at least twice EDGE).
 * Prints one line per file: path, output size, the path taken and an FNV-1a hash of the pixels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera_jpeg.h"
#include "tessera_png.h"

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)n);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) { free(data); data = NULL; }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static uint64_t fnv(const uint8_t *p, size_t pitch, int width_bytes, int height) {
    uint64_t h = 1469598103934665603ULL;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width_bytes; x++) h = (h ^ p[(size_t)y * pitch + (size_t)x]) * 1099511628211ULL;
    return h;
}

/* The JPEG frame size from the first SOFn segment. */
static int jpeg_size(const uint8_t *d, size_t n, int *w, int *h) {
    size_t i = 2;
    while (i + 9 < n && d[i] == 0xFF) {
        uint8_t m = d[i + 1];
        size_t len = ((size_t)d[i + 2] << 8) | d[i + 3];
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            *h = d[i + 5] << 8 | d[i + 6];
            *w = d[i + 7] << 8 | d[i + 8];
            return 1;
        }
        i += 2 + len;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[1], "jpeg") && strcmp(argv[1], "png"))) {
        fprintf(stderr, "usage: %s jpeg|png EDGE FILE...\n", argv[0]);
        return 2;
    }
    int edge = atoi(argv[2]), png = strcmp(argv[1], "png") == 0;
    for (int a = 3; a < argc; a++) {
        size_t size;
        uint8_t *data = read_file(argv[a], &size);
        if (!data) { printf("%s unreadable\n", argv[a]); continue; }
        int w = 0, h = 0, ow, oh, status;
        const char *path;
        if (png) {
            if (size < 24) { free(data); continue; }
            w = (int)((uint32_t)data[16] << 24 | (uint32_t)data[17] << 16 | (uint32_t)data[18] << 8 | data[19]);
            h = (int)((uint32_t)data[20] << 24 | (uint32_t)data[21] << 16 | (uint32_t)data[22] << 8 | data[23]);
            int fw = w / (2 * edge), fh = h / (2 * edge), factor = fw < fh ? fw : fh;
            if (factor < 1) factor = 1;
            ow = (w + factor - 1) / factor;
            oh = (h + factor - 1) / factor;
            uint8_t *pixels = malloc((size_t)ow * (size_t)oh * 4);
            status = tessera_png_decode_reduced(data, size, factor, pixels, (size_t)ow * 4, ow, oh);
            path = status == TESSERA_PNG_OK ? "fast" : "declined";
            printf("%s %dx%d %s %016llx\n", argv[a], ow, oh, path,
                   status == TESSERA_PNG_OK ? (unsigned long long)fnv(pixels, (size_t)ow * 4, ow * 4, oh) : 0ULL);
            free(pixels);
        } else {
            if (!jpeg_size(data, size, &w, &h)) { free(data); continue; }
            ow = (w + 7) / 8;
            oh = (h + 7) / 8;
            /* The aspect fill of EDGE x EDGE needs max(EDGE / w, EDGE / h) of the image. */
            double scale = (double)edge / w > (double)edge / h ? (double)edge / w : (double)edge / h;
            if (ow < (int)(w * scale + 0.999999) || oh < (int)(h * scale + 0.999999)) {
                printf("%s %dx%d not-1/8\n", argv[a], w, h);
                free(data);
                continue;
            }
            uint8_t *pixels = malloc((size_t)ow * (size_t)oh * 4);
            status = tessera_jpeg_decode_dc(data, size, TESSERA_JPEG_BGRA, pixels, (size_t)ow * 4, ow, oh);
            path = "dc";
            if (status == TESSERA_JPEG_UNSUPPORTED) {
                tessera_jpeg_report report;
                char message[TESSERA_JPEG_MESSAGE_LENGTH];
                status = tessera_jpeg_decode(data, size, 1, 8, TESSERA_JPEG_BGRA, pixels, (size_t)ow * 4, ow, oh, 1, &report, message);
                path = "libjpeg";
            }
            printf("%s %dx%d %s %016llx\n", argv[a], ow, oh, path,
                   status == TESSERA_JPEG_OK ? (unsigned long long)fnv(pixels, (size_t)ow * 4, ow * 4, oh) : 0ULL);
            free(pixels);
        }
        free(data);
    }
    return 0;
}
