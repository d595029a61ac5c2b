// libavif's API, found without pkg-config (Package.swift, target CAVIF): Debian's libavif-dev puts the
// header in /usr/include and libavif.so on the linker's default path, which the module map's
// `link "avif"` names. libavif.pc would also define AVIF_DLL, which only changes AVIF_API on Windows
// (dllimport); on Linux and macOS the declarations are the same without it.
// Homebrew's prefix is not on the compiler's default search path, so its header is named explicitly;
// the linker finds libavif there through the -L of libheif's pkg-config flags (target CHeif, same prefix).
#if __has_include(<avif/avif.h>)
#include <avif/avif.h>
#elif __has_include("/opt/homebrew/include/avif/avif.h")
#include "/opt/homebrew/include/avif/avif.h"
#elif __has_include("/usr/local/include/avif/avif.h")
#include "/usr/local/include/avif/avif.h"
#else
#error "libavif's header avif/avif.h not found: install libavif-dev (Debian) or libavif (Homebrew)"
#endif
