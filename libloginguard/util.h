/* Small helpers every file uses: allocation that cannot return NULL
 * (a daemon that runs out of memory here has nothing better to do than
 * stop), string copies and a clock. */
#ifndef LOGINGUARD_UTIL_H
#define LOGINGUARD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Room for one more element: array (count used, *capacity allocated)
 * doubles when full.  Returns the possibly moved array. */
void *grow_array(void *array, size_t count, size_t *capacity, size_t size);

/* Arrays of structs kept sorted by a uid_t member (at uid_offset): the
 * daemon looks up each of hundreds of users several times a sample.
 * uid_position: where uid is, or would go.  insert_at: room for one
 * element at `at` (zeroed), the tail moved up; returns the array, which
 * may have moved, so pointers into it do not survive an insertion. */
size_t uid_position(const void *array, size_t count, size_t size, size_t uid_offset, uid_t uid);
void *insert_at(void *array, size_t *count, size_t *capacity, size_t size, size_t at);
/* Where uid's element is, into *at, inserted (zeroed, with its uid) if it
 * had none; returns the array, which may have moved. */
void *uid_entry(void *array, size_t *count, size_t *capacity, size_t size, size_t uid_offset,
                uid_t uid, size_t *at);

/* Replace *slot with a copy of value (NULL allowed), freeing the old one. */
void set_string(char **slot, const char *value);

/* Copy with truncation, always NUL-terminated. */
void copy_string(char *dst, size_t dst_len, const char *src);

uint64_t now_realtime_usec(void);
uint64_t now_boottime_usec(void);

#endif
