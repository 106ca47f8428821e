#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void out_of_memory(void)
{
    fputs("loginguard: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
    void *q = reallocarray(p, n ? n : 1, size ? size : 1);
    if (!q)
        out_of_memory();
    return q;
}

void *grow_array(void *array, size_t count, size_t *capacity, size_t size)
{
    if (count < *capacity)
        return array;
    *capacity = *capacity ? *capacity * 2 : 16;
    return xreallocarray(array, *capacity, size);
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        out_of_memory();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        out_of_memory();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory();
    return s;
}

void set_string(char **slot, const char *value)
{
    free(*slot);
    *slot = value ? xstrdup(value) : NULL;
}

void copy_string(char *dst, size_t dst_len, const char *src)
{
    if (dst_len == 0)
        return;
    size_t n = strnlen(src, dst_len - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static uint64_t clock_usec(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

uint64_t now_realtime_usec(void)
{
    return clock_usec(CLOCK_REALTIME);
}

uint64_t now_boottime_usec(void)
{
    return clock_usec(CLOCK_BOOTTIME);
}

static uid_t uid_at(const void *array, size_t size, size_t uid_offset, size_t i)
{
    uid_t uid;
    memcpy(&uid, (const char *)array + i * size + uid_offset, sizeof(uid));
    return uid;
}

size_t uid_position(const void *array, size_t count, size_t size, size_t uid_offset, uid_t uid)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (uid_at(array, size, uid_offset, mid) < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *insert_at(void *array, size_t *count, size_t *capacity, size_t size, size_t at)
{
    char *a = grow_array(array, *count, capacity, size);
    memmove(a + (at + 1) * size, a + at * size, (*count - at) * size);
    memset(a + at * size, 0, size);
    (*count)++;
    return a;
}

void *uid_entry(void *array, size_t *count, size_t *capacity, size_t size, size_t uid_offset,
                uid_t uid, size_t *at)
{
    *at = uid_position(array, *count, size, uid_offset, uid);
    if (*at == *count || uid_at(array, size, uid_offset, *at) != uid) {
        array = insert_at(array, count, capacity, size, *at);
        memcpy((char *)array + *at * size + uid_offset, &uid, sizeof(uid));
    }
    return array;
}
