#define _GNU_SOURCE
#include "tessera_file_locks.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#if defined(F_OFD_SETLK)
#define LOCK_SET F_OFD_SETLK
#define LOCK_SET_WAIT F_OFD_SETLKW
#define LOCK_GET F_OFD_GETLK
#else
#define LOCK_SET F_SETLK
#define LOCK_SET_WAIT F_SETLKW
#define LOCK_GET F_GETLK
#endif

static struct flock range(short type, int64_t offset, int64_t length) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);   // l_pid must be 0 for OFD locks
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = (off_t)offset;
    lock.l_len = (off_t)length;
    return lock;
}

int tessera_range_lock(int fd, int64_t offset, int64_t length, int exclusive, int wait) {
    struct flock lock = range(exclusive ? F_WRLCK : F_RDLCK, offset, length);
    int result;
    do { result = fcntl(fd, wait ? LOCK_SET_WAIT : LOCK_SET, &lock); } while (result != 0 && errno == EINTR);
    return result == 0 ? 0 : errno;
}

int tessera_range_unlock(int fd, int64_t offset, int64_t length) {
    struct flock lock = range(F_UNLCK, offset, length);
    int result;
    do { result = fcntl(fd, LOCK_SET, &lock); } while (result != 0 && errno == EINTR);
    return result == 0 ? 0 : errno;
}

int tessera_range_is_held(int fd, int64_t offset, int64_t length) {
    struct flock lock = range(F_WRLCK, offset, length);
    int result;
    do { result = fcntl(fd, LOCK_GET, &lock); } while (result != 0 && errno == EINTR);
    if (result != 0) return -1;
    return lock.l_type == F_UNLCK ? 0 : 1;
}

void tessera_word_wait(uint32_t *address, uint32_t expected, int64_t timeout_ns) {
    if (timeout_ns <= 0) return;
#if defined(__linux__)
    struct timespec timeout = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
    syscall(SYS_futex, address, FUTEX_WAIT, expected, &timeout, NULL, 0);
#else
    (void)address; (void)expected;
    struct timespec pause = { .tv_sec = 0, .tv_nsec = timeout_ns < 1000000 ? timeout_ns : 1000000 };
    nanosleep(&pause, NULL);
#endif
}

void tessera_word_wake(uint32_t *address) {
#if defined(__linux__)
    syscall(SYS_futex, address, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
    (void)address;
#endif
}

int tessera_zero_file_range(int fd, int64_t length) {
#if defined(__linux__)
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)length) == 0) {
        int code;
        do { code = posix_fallocate(fd, 0, (off_t)length); } while (code == EINTR);
        if (code == 0) return 0;
        if (code != EOPNOTSUPP && code != EINVAL) return code;
        return 0;   // the range reads as zeros; without block allocation a later write may find the disk full
    }
    if (errno != EOPNOTSUPP && errno != ENOSYS) return errno;
#endif
    static const char zeros[65536];
    for (int64_t offset = 0; offset < length; ) {
        size_t chunk = length - offset < (int64_t)sizeof zeros ? (size_t)(length - offset) : sizeof zeros;
        ssize_t written = pwrite(fd, zeros, chunk, (off_t)offset);
        if (written < 0) { if (errno == EINTR) continue; return errno; }
        offset += written;
    }
    return 0;
}
