#include "jpeg_floor.h"

#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>

struct floor_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
};

static void floor_error_exit(j_common_ptr cinfo) { longjmp(((struct floor_error *)cinfo->err)->jump, 1); }
static void floor_output_message(j_common_ptr cinfo) { (void)cinfo; }

int tessera_jpeg_read_coefficients(const uint8_t *data, size_t size) {
    struct jpeg_decompress_struct cinfo;
    struct floor_error error;
    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = floor_error_exit;
    error.base.output_message = floor_output_message;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    /* Every scan is entropy-decoded into the whole-image coefficient arrays; nothing else runs. */
    (void)jpeg_read_coefficients(&cinfo);
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
