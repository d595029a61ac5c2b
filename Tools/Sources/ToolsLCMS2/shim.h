#include <lcms2.h>

/* The pixel formats Tessera hands to lcms2. lcms2.h defines them as macros built from shift macros,
 * which Swift does not import; these constants carry their values. */
static const cmsUInt32Number tessera_lcms_bgra_8 = TYPE_BGRA_8;
static const cmsUInt32Number tessera_lcms_rgb_8 = TYPE_RGB_8;
static const cmsUInt32Number tessera_lcms_cmyk_8 = TYPE_CMYK_8;
static const cmsUInt32Number tessera_lcms_cmyk_8_inverted = TYPE_CMYK_8_REV;
