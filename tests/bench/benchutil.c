/* Helpers shared by the benchmarks: time, whole-file I/O, machine load. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

double tv_us(struct timeval t)
{
    return (double)t.tv_sec * 1e6 + (double)t.tv_usec;
}

double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: callers check stopping */
}

ssize_t read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int write_full(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, (const char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

char *read_text(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(max + 1);
    if (!buf) {
        close(fd);
        return NULL;
    }
    ssize_t n = read_full(fd, buf, max);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc = write_full(fd, text, strlen(text));
    if (close(fd) < 0)
        rc = -1;
    return rc;
}

/* Busy time of the whole machine, usec (from /proc/stat's first line). */
double machine_busy_us(void)
{
    char *t = read_text("/proc/stat", 4096);
    double busy = 0;
    unsigned long long v[8] = {0};
    if (t && sscanf(t, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                    &v[4], &v[5], &v[6], &v[7]) == 8)
        busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]); /* not idle, iowait */
    free(t);
    return busy * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

bool has_token(const char *list, const char *word)
{
    size_t w = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == w && memcmp(p, word, w) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}
