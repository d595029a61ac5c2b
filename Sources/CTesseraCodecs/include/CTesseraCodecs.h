/* The C codec code of Tessera: the libjpeg shim and the PNG fast path. */
#include "tessera_jpeg.h"
#include "tessera_png.h"
