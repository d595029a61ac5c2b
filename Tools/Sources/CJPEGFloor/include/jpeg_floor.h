// The entropy-decoding floor of `tessera bench ingest`: libjpeg-turbo's jpeg_read_coefficients, which
// Huffman-decodes every coefficient of every scan into libjpeg's coefficient arrays and stops there (no
// dequantization, no inverse DCT, no colour conversion). No decoder that reads every symbol of a file can
// be faster than this on the same machine.
#ifndef TESSERA_JPEG_FLOOR_H
#define TESSERA_JPEG_FLOOR_H
#include <stddef.h>
#include <stdint.h>

/// Reads the header and every coefficient of the JPEG in `data` with a fresh decompressor. Returns 0 on
/// success, 1 when libjpeg failed (warnings do not count). libjpeg's errors end in this function.
int tessera_jpeg_read_coefficients(const uint8_t *data, size_t size);

#endif
