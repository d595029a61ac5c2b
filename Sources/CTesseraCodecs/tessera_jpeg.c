#include "tessera_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

#define TESSERA_JPEG_MAX_SCANS 500

/* libjpeg's error manager, extended with the jump target and what was reported. */
struct tessera_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
    int warned;       /* a warning other than extraneous bytes before a marker was seen */
    int warnings;     /* every warning, extraneous bytes included */
    int extraneous;   /* of which "extraneous bytes before marker" */
    /* Where the data first ran out (libjpeg's memory source then inserts an EOI and warns
     * JWRN_JPEG_EOF): the iMCU row being read, and for each component whether its rows up to there
     * (1) or all its rows (2) had received their DC coefficients, or none (0). */
    int eof;
    JDIMENSION eof_imcu_row;
    /* After that, whether the entropy decoder needed bits the data no longer had (JWRN_HIT_MARKER,
     * "premature end of data segment"), and in which iMCU row: the rows before it are whole. Without
     * it the source ran dry only in the decoder's read-ahead and every row read so far is whole. */
    int hit;
    JDIMENSION hit_imcu_row;
    unsigned char eof_coverage[MAX_COMPONENTS];
    /* Components that have been in a scan (sequential multi-scan files), noted by the progress monitor. */
    unsigned char scanned[MAX_COMPONENTS];
};

/* Notes which components already have data when the source first runs dry: the ones in the scan
 * being read cover the rows up to the current iMCU row (a progressive scan only if it brings their
 * first DC bits), the others all rows when an earlier scan brought their DC coefficients. */
static void tessera_note_eof(j_decompress_ptr cinfo, struct tessera_error *error) {
    error->eof = 1;
    error->eof_imcu_row = cinfo->input_iMCU_row;
    int in_scan[MAX_COMPONENTS] = {0};
    for (int i = 0; i < cinfo->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        if (!cinfo->cur_comp_info[i]) continue;
        int c = cinfo->cur_comp_info[i]->component_index;
        if (c >= 0 && c < MAX_COMPONENTS) in_scan[c] = 1;
    }
    for (int c = 0; c < cinfo->num_components && c < MAX_COMPONENTS; c++) {
        int had_dc = cinfo->progressive_mode ? (cinfo->coef_bits && cinfo->coef_bits[c][0] >= 0) : error->scanned[c];
        if (in_scan[c] && (!cinfo->progressive_mode || (cinfo->Ss == 0 && cinfo->Ah == 0)))
            error->eof_coverage[c] = 1;
        else
            error->eof_coverage[c] = had_dc ? 2 : 0;
    }
}

/* The output rows that came from data after the source ran dry: the smallest coverage of any
 * component, in whole iMCU rows. The iMCU row in which the entropy decoder first lacked bits does not
 * count: its blocks past the cut are libjpeg's zeroed coefficients (smeared colour), and Chromium does
 * not draw it either; it is filled like the rows below. When the decoder never lacked a bit (the data
 * ends after the last entropy byte, only EOI missing, or between scans), every row of the scan counts. */
static int tessera_rows_covered(j_decompress_ptr cinfo, const struct tessera_error *error) {
    if (!error->eof) return (int)cinfo->output_height;
#if JPEG_LIB_VERSION >= 70
    long imcu_rows = (long)cinfo->max_v_samp_factor * cinfo->min_DCT_v_scaled_size;
#else
    long imcu_rows = (long)cinfo->max_v_samp_factor * cinfo->min_DCT_scaled_size;
#endif
    long partial = error->hit && error->hit_imcu_row < cinfo->total_iMCU_rows ? (long)error->hit_imcu_row * imcu_rows
                                                                               : (long)cinfo->output_height;
    long rows = (long)cinfo->output_height;
    for (int c = 0; c < cinfo->num_components && c < MAX_COMPONENTS; c++) {
        long covered = error->eof_coverage[c] == 2 ? (long)cinfo->output_height : error->eof_coverage[c] == 1 ? partial : 0;
        if (covered < rows) rows = covered;
    }
    return (int)(rows < 0 ? 0 : rows);
}

static void tessera_error_exit(j_common_ptr cinfo) {
    struct tessera_error *error = (struct tessera_error *)cinfo->err;
    if (error->message) (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Warnings (level -1) are counted, the first one's text kept (extraneous bytes before a marker only
 * counted), and the first end of data noted; trace messages are dropped. */
static void tessera_emit_message(j_common_ptr cinfo, int level) {
    struct tessera_error *error = (struct tessera_error *)cinfo->err;
    if (level >= 0) return;
    cinfo->err->num_warnings++;
    error->warnings++;
    if (cinfo->err->msg_code == JWRN_EXTRANEOUS_DATA) {
        error->extraneous++;
        return;
    }
    if (cinfo->err->msg_code == JWRN_JPEG_EOF && !error->eof && cinfo->is_decompressor)
        tessera_note_eof((j_decompress_ptr)cinfo, error);
    if (cinfo->err->msg_code == JWRN_HIT_MARKER && error->eof && !error->hit && cinfo->is_decompressor) {
        error->hit = 1;
        error->hit_imcu_row = ((j_decompress_ptr)cinfo)->input_iMCU_row;
    }
    if (!error->warned && error->message) (*cinfo->err->format_message)(cinfo, error->message);
    error->warned = 1;
}

static void tessera_output_message(j_common_ptr cinfo) { (void)cinfo; }

/* The same guard as TurboJPEG's TJFLAG_LIMITSCANS: CPU-exhaustion inputs with thousands of scans. */
static void tessera_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
    struct tessera_error *noted = (struct tessera_error *)cinfo->err;
    for (int i = 0; i < dinfo->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        int c = dinfo->cur_comp_info[i] ? dinfo->cur_comp_info[i]->component_index : -1;
        if (c >= 0 && c < MAX_COMPONENTS) noted->scanned[c] = 1;
    }
    if (dinfo->input_scan_number > TESSERA_JPEG_MAX_SCANS) {
        cinfo->err->msg_code = JERR_UNKNOWN_MARKER;   /* any code: the message is replaced below */
        struct tessera_error *error = (struct tessera_error *)cinfo->err;
        if (error->message)
            snprintf(error->message, TESSERA_JPEG_MESSAGE_LENGTH, "Progressive JPEG image has more than %d scans",
                     TESSERA_JPEG_MAX_SCANS);
        longjmp(error->jump, 1);
    }
}

static void tessera_setup(struct jpeg_decompress_struct *cinfo, struct tessera_error *error, char *message,
                          struct jpeg_progress_mgr *progress) {
    cinfo->err = jpeg_std_error(&error->base);
    error->base.error_exit = tessera_error_exit;
    error->base.emit_message = tessera_emit_message;
    error->base.output_message = tessera_output_message;
    error->message = message;
    error->warned = 0;
    error->warnings = 0;
    error->extraneous = 0;
    error->eof = 0;
    error->eof_imcu_row = 0;
    error->hit = 0;
    error->hit_imcu_row = 0;
    memset(error->eof_coverage, 0, sizeof error->eof_coverage);
    memset(error->scanned, 0, sizeof error->scanned);
    if (message) message[0] = 0;
    progress->progress_monitor = tessera_progress;
}

static int tessera_color_space(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return TESSERA_JPEG_CS_GRAY;
    case JCS_RGB: return TESSERA_JPEG_CS_RGB;
    case JCS_YCbCr: return TESSERA_JPEG_CS_YCBCR;
    case JCS_CMYK: return TESSERA_JPEG_CS_CMYK;
    case JCS_YCCK: return TESSERA_JPEG_CS_YCCK;
    default: return TESSERA_JPEG_CS_UNKNOWN;
    }
}

int tessera_jpeg_read_header(const uint8_t *data, size_t size, tessera_jpeg_header *header,
                             char message[TESSERA_JPEG_MESSAGE_LENGTH]) {
    struct jpeg_decompress_struct cinfo;
    struct tessera_error error;
    struct jpeg_progress_mgr progress;
    memset(header, 0, sizeof *header);
    tessera_setup(&cinfo, &error, message, &progress);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return TESSERA_JPEG_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    header->width = (int)cinfo.image_width;
    header->height = (int)cinfo.image_height;
    header->color_space = tessera_color_space(cinfo.jpeg_color_space);
    header->progressive = cinfo.progressive_mode ? 1 : 0;
    jpeg_destroy_decompress(&cinfo);
    return TESSERA_JPEG_OK;
}

int tessera_jpeg_is_progressive(const uint8_t *data, size_t size) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
    size_t i = 2;
    while (i + 4 <= size) {
        if (data[i] != 0xFF) return 0;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }   /* fill byte */
        if (marker == 0xC2) return 1;
        if ((marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) || marker == 0xDA)
            return 0;   /* another frame type, or a scan before any frame */
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2) return 0;
        i += 2 + length;
    }
    return 0;
}

/* The end of the entropy-coded data starting at `i`: the offset of the next marker that is neither a
 * stuffed zero nor a restart marker, or `size` when there is none. */
static size_t tessera_entropy_end(const uint8_t *data, size_t size, size_t i) {
    while (i < size) {
        const uint8_t *ff = memchr(data + i, 0xFF, size - i);
        if (!ff) return size;
        i = (size_t)(ff - data);
        if (i + 1 >= size) return size;
        uint8_t next = data[i + 1];
        if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) { i += 2; continue; }
        if (next == 0xFF) { i += 1; continue; }   /* fill bytes before a marker */
        return i;
    }
    return size;
}

/* Copies `data` into a new buffer without the scans whose single component is marked in `drop`
 * (indexed by component id) and that start after the DC coefficient (Ss > 0). Returns NULL when the
 * stream does not have the expected shape (the caller then decodes the original) or when it has more
 * scans than the limit (`*too_many_scans` set). */
static uint8_t *tessera_filter_scans(const uint8_t *data, size_t size, const uint8_t drop[256], size_t *filtered_size,
                                     int *too_many_scans) {
    *too_many_scans = 0;
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return NULL;
    uint8_t *out = malloc(size);
    if (!out) return NULL;
    size_t o = 0, i = 2, scans = 0;
    out[o++] = 0xFF; out[o++] = 0xD8;
    for (;;) {
        if (i + 2 > size || data[i] != 0xFF) break;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }
        if (marker == 0xD9) {   /* EOI: done */
            out[o++] = 0xFF; out[o++] = 0xD9;
            *filtered_size = o;
            return out;
        }
        if (i + 4 > size) break;
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2 || i + 2 + length > size) break;
        if (marker != 0xDA) {
            memcpy(out + o, data + i, 2 + length);
            o += 2 + length;
            i += 2 + length;
            continue;
        }
        if (++scans > TESSERA_JPEG_MAX_SCANS) { *too_many_scans = 1; break; }
        /* SOS: length, Ns, Ns x (id, tables), Ss, Se, Ah/Al. */
        const uint8_t *sos = data + i + 4;
        size_t ns = length >= 3 ? sos[0] : 0;
        if (ns == 0 || length != 6 + 2 * ns) break;
        uint8_t ss = sos[1 + 2 * ns];
        size_t end = tessera_entropy_end(data, size, i + 2 + length);
        if (end >= size) break;   /* no marker after the scan: truncated, decode the original */
        if (!(ns == 1 && ss > 0 && drop[sos[1]])) {
            memcpy(out + o, data + i, end - i);
            o += end - i;
        }
        i = end;
    }
    free(out);
    return NULL;
}

/* The length of the longest prefix of `data` that ends where a marker segment starts, after at least
 * one scan whose entropy-coded data is complete: the data to decode again when libjpeg failed on a
 * file cut inside a marker segment between scans (a progressive file cut in a DHT segment). 0 when
 * there is no such prefix shorter than `size`. */
static size_t tessera_complete_prefix(const uint8_t *data, size_t size) {
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
    size_t i = 2, last_boundary = 0;
    int scans = 0;
    while (i + 2 <= size) {
        if (data[i] != 0xFF) return 0;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }
        if (marker == 0xD9) return 0;   /* a complete file */
        if (scans > 0) last_boundary = i;
        if (i + 4 > size) break;
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2) return 0;
        if (i + 2 + length > size) break;   /* this segment is cut */
        if (marker != 0xDA) { i += 2 + length; continue; }
        size_t end = tessera_entropy_end(data, size, i + 2 + length);
        if (end >= size) return 0;   /* cut inside entropy-coded data: nothing to gain */
        scans++;
        i = end;
    }
    return scans > 0 && last_boundary > 0 && last_boundary < size ? last_boundary : 0;
}

static int tessera_decode_once(const uint8_t *data, size_t size, int scale_num, int scale_denom, int format,
                               uint8_t *pixels, size_t pitch, int width, int height, int skip_unneeded_scans,
                               tessera_jpeg_report *report, char message[TESSERA_JPEG_MESSAGE_LENGTH]) {
    struct jpeg_decompress_struct cinfo;
    struct tessera_error error;
    struct jpeg_progress_mgr progress;
    /* volatile: read after a longjmp. */
    uint8_t *volatile filtered = NULL;
    memset(report, 0, sizeof *report);
    tessera_setup(&cinfo, &error, message, &progress);
    if (setjmp(error.jump)) {
        report->warnings = error.warnings;
        report->extraneous = error.extraneous;
        report->truncated = error.eof;
        jpeg_destroy_decompress(&cinfo);
        free(filtered);
        return TESSERA_JPEG_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.scale_num = (unsigned int)scale_num;
    cinfo.scale_denom = (unsigned int)scale_denom;
    cinfo.do_block_smoothing = FALSE;

    if (skip_unneeded_scans && cinfo.progressive_mode) {
        jpeg_calc_output_dimensions(&cinfo);
        uint8_t drop[256] = {0};
        int any = 0;
        for (int c = 0; c < cinfo.num_components; c++) {
            if (cinfo.comp_info[c].DCT_scaled_size == 1) {
                drop[cinfo.comp_info[c].component_id & 0xFF] = 1;
                any = 1;
            }
        }
        if (any) {
            size_t filtered_size = 0;
            int too_many = 0;
            filtered = tessera_filter_scans(data, size, drop, &filtered_size, &too_many);
            if (too_many) {
                snprintf(message, TESSERA_JPEG_MESSAGE_LENGTH, "Progressive JPEG image has more than %d scans",
                         TESSERA_JPEG_MAX_SCANS);
                jpeg_destroy_decompress(&cinfo);
                return TESSERA_JPEG_ERROR;
            }
            if (filtered) {
                /* Start over on the filtered stream with the same settings (and a fresh record of
                 * warnings: the header's are seen again). */
                jpeg_abort_decompress(&cinfo);
                error.warned = 0; error.warnings = 0; error.extraneous = 0;
                if (message) message[0] = 0;
                jpeg_mem_src(&cinfo, filtered, (unsigned long)filtered_size);
                jpeg_read_header(&cinfo, TRUE);
                cinfo.scale_num = (unsigned int)scale_num;
                cinfo.scale_denom = (unsigned int)scale_denom;
                cinfo.do_block_smoothing = FALSE;
            }
        }
    }

    switch (format) {
    case TESSERA_JPEG_GRAY: cinfo.out_color_space = JCS_GRAYSCALE; break;
    case TESSERA_JPEG_CMYK: cinfo.out_color_space = JCS_CMYK; break;
    default: cinfo.out_color_space = JCS_EXT_BGRA; break;
    }
    jpeg_start_decompress(&cinfo);
    if ((int)cinfo.output_width != width || (int)cinfo.output_height != height) {
        snprintf(message, TESSERA_JPEG_MESSAGE_LENGTH, "scaled size %ux%u is not the requested %dx%d",
                 cinfo.output_width, cinfo.output_height, width, height);
        jpeg_destroy_decompress(&cinfo);
        free(filtered);
        return TESSERA_JPEG_ERROR;
    }
    int stopped = 0;
    while (cinfo.output_scanline < cinfo.output_height) {
        /* A single-scan file whose data ran out: once the rows that came from data are out, the rest
         * would only be libjpeg's grey for the missing blocks, which the caller fills anyway. */
        if (error.eof && !jpeg_has_multiple_scans(&cinfo) &&
            (int)cinfo.output_scanline >= tessera_rows_covered(&cinfo, &error)) {
            stopped = 1;
            break;
        }
        JSAMPROW rows[4];
        int n = 0;
        for (; n < 4 && cinfo.output_scanline + (unsigned)n < cinfo.output_height; n++)
            rows[n] = pixels + (size_t)(cinfo.output_scanline + (unsigned)n) * pitch;
        jpeg_read_scanlines(&cinfo, rows, (JDIMENSION)n);
    }
    if (!stopped) jpeg_finish_decompress(&cinfo);
    int warned = error.warned;
    report->warnings = error.warnings;
    report->extraneous = error.extraneous;
    report->truncated = error.eof;
    report->decoded_rows = tessera_rows_covered(&cinfo, &error);
    if (report->decoded_rows > height) report->decoded_rows = height;
    jpeg_destroy_decompress(&cinfo);
    free(filtered);
    return warned ? TESSERA_JPEG_WARNING : TESSERA_JPEG_OK;
}

int tessera_jpeg_decode(const uint8_t *data, size_t size, int scale_num, int scale_denom, int format,
                        uint8_t *pixels, size_t pitch, int width, int height, int skip_unneeded_scans,
                        tessera_jpeg_report *report, char message[TESSERA_JPEG_MESSAGE_LENGTH]) {
    int result = tessera_decode_once(data, size, scale_num, scale_denom, format, pixels, pitch, width, height,
                                     skip_unneeded_scans, report, message);
    if (result != TESSERA_JPEG_ERROR || !report->truncated) return result;
    /* The data ran out and libjpeg then failed: a file cut inside a marker segment between scans
     * reads the inserted EOI as part of that segment. Decode again up to where that segment starts,
     * so that the scans before it count. */
    size_t prefix = tessera_complete_prefix(data, size);
    if (prefix == 0) return result;
    char first[TESSERA_JPEG_MESSAGE_LENGTH];
    memcpy(first, message, TESSERA_JPEG_MESSAGE_LENGTH);
    tessera_jpeg_report first_report = *report;
    int retried = tessera_decode_once(data, prefix, scale_num, scale_denom, format, pixels, pitch, width, height,
                                      skip_unneeded_scans, report, message);
    if (retried == TESSERA_JPEG_ERROR || !report->truncated) {
        memcpy(message, first, TESSERA_JPEG_MESSAGE_LENGTH);
        *report = first_report;
        return result;
    }
    return retried;
}
