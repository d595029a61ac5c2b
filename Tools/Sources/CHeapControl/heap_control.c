#include "heap_control.h"
#include <stdlib.h>   // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>

tessera_heap_statistics tessera_heap_statistics_now(void) {
    tessera_heap_statistics result = {0, 0, 0};
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
    result.inUse = info.uordblks + info.hblkhd;
    result.freeInArenas = info.fordblks;
    result.mapped = info.hblkhd;
#endif
    return result;
}

int tessera_heap_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
int tessera_heap_set_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }
int tessera_heap_set_top_pad(int bytes) { return mallopt(M_TOP_PAD, bytes); }
int tessera_heap_set_arena_limit(int count) { return mallopt(M_ARENA_MAX, count); }
int tessera_heap_trim(void) { return malloc_trim(0); }

#else   // another C library: nothing to control, nothing to report

tessera_heap_statistics tessera_heap_statistics_now(void) { tessera_heap_statistics none = {0, 0, 0}; return none; }
int tessera_heap_set_mmap_threshold(int bytes) { (void)bytes; return 0; }
int tessera_heap_set_trim_threshold(int bytes) { (void)bytes; return 0; }
int tessera_heap_set_top_pad(int bytes) { (void)bytes; return 0; }
int tessera_heap_set_arena_limit(int count) { (void)count; return 0; }
int tessera_heap_trim(void) { return 0; }

#endif
