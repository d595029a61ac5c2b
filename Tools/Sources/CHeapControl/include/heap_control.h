// glibc's allocator controls and statistics from <malloc.h>, which Swift's Glibc module does not import.
// On other C libraries the functions do nothing and report zeros.
#ifndef TESSERA_HEAP_CONTROL_H
#define TESSERA_HEAP_CONTROL_H
#include <stddef.h>

/// What the allocator holds, in bytes (glibc's mallinfo2, summed over every arena).
typedef struct {
    /// Bytes handed out and not freed yet: in the arenas plus in blocks that have their own mmap.
    size_t inUse;
    /// Free bytes inside the arenas (resident or not): what fragmentation and churn leave behind.
    size_t freeInArenas;
    /// Bytes in blocks that have their own mmap (part of inUse).
    size_t mapped;
} tessera_heap_statistics;

tessera_heap_statistics tessera_heap_statistics_now(void);
/// Serves blocks of `bytes` and more with their own mmap, fixed (no dynamic raise). Returns 1 on success.
int tessera_heap_set_mmap_threshold(int bytes);
/// Keeps up to `bytes` of free memory at the top of each arena before giving it back to the system. Returns 1 on success.
int tessera_heap_set_trim_threshold(int bytes);
/// Grows an arena by `bytes` more than a request needs, and keeps that much at its top when it trims. Returns 1 on success.
int tessera_heap_set_top_pad(int bytes);
/// Lets at most `count` heap arenas exist (threads share them beyond that). Returns 1 on success.
int tessera_heap_set_arena_limit(int count);
/// Returns every whole free page inside the arenas to the system. Returns 1 when memory was released.
int tessera_heap_trim(void);

#endif
