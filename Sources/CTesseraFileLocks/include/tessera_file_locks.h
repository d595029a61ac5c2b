#ifndef TESSERA_FILE_LOCKS_H
#define TESSERA_FILE_LOCKS_H

#include <stdint.h>

/// Byte-range locks owned by an open file description (Linux `F_OFD_SETLK`), for the image tables
/// that several processes share. Unlike `flock`, they cover byte ranges, so one file carries a
/// writers' lock and one lock per participant; unlike classic POSIX record locks, they belong to the
/// open file description, not to the process: two descriptors opened separately in one process
/// exclude each other, closing an unrelated descriptor of the same file releases nothing, and the
/// kernel releases them when the last descriptor of the description closes, including when the
/// process dies. Elsewhere than Linux they fall back to POSIX record locks (per process).
///
/// Ranges may lie beyond the end of the file. Each call retries on EINTR.

/// Locks `[offset, offset + length)`, exclusively or shared. With `wait`, blocks until granted;
/// without, fails at once. Returns 0, or the errno (EAGAIN/EACCES when held elsewhere without `wait`).
int tessera_range_lock(int fd, int64_t offset, int64_t length, int exclusive, int wait);

/// Unlocks `[offset, offset + length)`. Returns 0 or the errno.
int tessera_range_unlock(int fd, int64_t offset, int64_t length);

/// Whether another open file description holds a lock that conflicts with an exclusive lock on
/// `[offset, offset + length)`: 1 if so, 0 if not, -1 on error.
int tessera_range_is_held(int fd, int64_t offset, int64_t length);

/// Makes `[0, length)` of the file read as zeros and gives it disk blocks, without ever making the file
/// shorter (a mapping of it in another process stays valid): punches a hole, then allocates the range
/// (Linux `fallocate`); where holes cannot be punched, writes zeros. Returns 0 or the errno.
int tessera_zero_file_range(int fd, int64_t length);

/// Waits until the 32-bit word at `address` (in a shared mapping: other processes may wake it) no longer
/// holds `expected`, or `timeout_ns` nanoseconds pass, or a wake-up comes (Linux `FUTEX_WAIT`, not
/// private). Returns at once when the word differs already. Elsewhere than Linux it sleeps a
/// millisecond, and callers look again.
void tessera_word_wait(uint32_t *address, uint32_t expected, int64_t timeout_ns);

/// Wakes every process and thread waiting on the word at `address`.
void tessera_word_wake(uint32_t *address);

#endif
