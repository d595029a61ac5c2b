#include "heap_control.h"
#include <stdlib.h>   // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

tessera_heap_statistics tessera_heap_statistics_now(void) {
    tessera_heap_statistics result = {0, 0, 0};
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    result.inUse = info.uordblks + info.hblkhd;
    result.freeInArenas = info.fordblks;
    result.mapped = info.hblkhd;
#endif
    return result;
}

int tessera_heap_set_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

int tessera_heap_set_arena_limit(int count) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

int tessera_heap_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
