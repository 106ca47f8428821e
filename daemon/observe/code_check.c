#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "observe/code_check.h"
#include "util.h"

static const char *const injectors[] = {"LD_PRELOAD=", "LD_AUDIT="};

bool code_environ_clean(const char *env, size_t len, char *why, size_t why_len)
{
    size_t at = 0;
    while (at < len) {
        const char *entry = env + at;
        const char *nul = memchr(entry, '\0', len - at);
        size_t n = nul ? (size_t)(nul - entry) : len - at;
        for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++) {
            size_t k = strlen(injectors[i]);
            if (n > k && memcmp(entry, injectors[i], k) == 0) {
                snprintf(why, why_len, "%.*s in its environment", (int)(k - 1), injectors[i]);
                return false;
            }
        }
        at += n + 1;
    }
    return true;
}

/* The line that starts with key, or NULL. */
static const char *line_with(const char *text, size_t len, const char *key, size_t *line_len)
{
    size_t k = strlen(key);
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        if (n >= k && memcmp(text + at, key, k) == 0) {
            *line_len = n;
            return text + at;
        }
        at += n + 1;
    }
    return NULL;
}

/* The number after the first k bytes of a line of n, blanks skipped. */
static uint64_t number_after(const char *line, size_t n, size_t k)
{
    char num[24];
    while (k < n && (line[k] == ' ' || line[k] == '\t'))
        k++;
    size_t digits = n - k < sizeof(num) - 1 ? n - k : sizeof(num) - 1;
    memcpy(num, line + k, digits);
    num[digits] = '\0';
    return strtoull(num, NULL, 10);
}

bool code_status_clean(const char *status, size_t len, char *why, size_t why_len)
{
    size_t n;
    const char *line = line_with(status, len, "TracerPid:", &n);
    if (!line) {
        snprintf(why, why_len, "no TracerPid in its status");
        return false;
    }
    uint64_t tracer = number_after(line, n, strlen("TracerPid:"));
    if (tracer == 0)
        return true;
    snprintf(why, why_len, "traced by process %llu", (unsigned long long)tracer);
    return false;
}

/* Split off the next space-separated field of [*at, end). */
static const char *field(const char **at, const char *end, size_t *n)
{
    const char *p = *at;
    while (p < end && *p == ' ')
        p++;
    const char *start = p;
    while (p < end && *p != ' ')
        p++;
    *n = (size_t)(p - start);
    *at = p;
    return start;
}

/* A mapping's first line: "start-end perms offset major:minor inode   path".
 * False when the line is not one (a field line). */
static bool parse_header(const char *line, size_t len, bool *exec, struct code_mapping *m)
{
    const char *at = line, *end = line + len;
    size_t n;
    const char *range = field(&at, end, &n);
    if (!n || !memchr(range, '-', n) || !strchr("0123456789abcdef", range[0]))
        return false;
    const char *perms = field(&at, end, &n);
    if (n != 4)
        return false;
    *exec = perms[2] == 'x';
    field(&at, end, &n); /* offset */
    const char *dev = field(&at, end, &n);
    char buf[32];
    if (!n || n >= sizeof(buf))
        return false;
    memcpy(buf, dev, n);
    buf[n] = '\0';
    if (sscanf(buf, "%x:%x", &m->dev_major, &m->dev_minor) != 2)
        return false;
    const char *inode = field(&at, end, &n);
    if (!n || n >= sizeof(buf))
        return false;
    memcpy(buf, inode, n);
    buf[n] = '\0';
    m->inode = strtoull(buf, NULL, 10);
    while (at < end && *at == ' ')
        at++;
    m->path = at;
    m->path_len = (size_t)(end - at);
    m->anonymous_kb = 0;
    return true;
}

static bool kernels_own(const struct code_mapping *m)
{
    /* [uprobes]: the kernel's, in every traced process while uprobes
     * are set (bpftrace, perf probe on the node). */
    static const char *const own[] = {"[vdso]", "[vsyscall]", "[uprobes]"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (m->path_len == strlen(own[i]) && memcmp(m->path, own[i], m->path_len) == 0)
            return true;
    return false;
}

/* An executable mapping, from its first line. */
static bool mapping_clean(const struct code_mapping *m, code_file_ok file_ok, void *arg, char *why,
                          size_t why_len)
{
    if (m->inode == 0) {
        if (kernels_own(m))
            return true;
        snprintf(why, why_len, "anonymous executable memory%s%.*s", m->path_len ? " " : "",
                 (int)(m->path_len < 64 ? m->path_len : 64), m->path);
        return false;
    }
    return file_ok(m, why, why_len, arg);
}

bool code_smaps_clean(const char *smaps, size_t len, code_file_ok file_ok, void *arg, char *why,
                      size_t why_len)
{
    struct code_mapping m = {0};
    bool in_exec = false;
    for (size_t at = 0; at < len;) {
        const char *line = smaps + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + 1;
        bool exec;
        if (parse_header(line, n, &exec, &m)) {
            in_exec = exec;
            if (exec && !mapping_clean(&m, file_ok, arg, why, why_len))
                return false;
            continue;
        }
        if (!in_exec || n < 10 || memcmp(line, "Anonymous:", 10) != 0)
            continue;
        if (number_after(line, n, 10) > 0) {
            snprintf(why, why_len, "its code changed in memory (%.*s)",
                     (int)(m.path_len < 120 ? m.path_len : 120), m.path);
            return false;
        }
    }
    return true;
}

bool code_file_is_roots(const struct code_mapping *m, char *why, size_t why_len, void *arg)
{
    (void)arg;
    char path[4096];
    int shown = (int)(m->path_len < 120 ? m->path_len : 120);
    if (m->path_len == 0 || m->path_len >= sizeof(path) || m->path[0] != '/') {
        snprintf(why, why_len, "code from a mapping with no path it can be found by");
        return false;
    }
    memcpy(path, m->path, m->path_len);
    path[m->path_len] = '\0';
    struct stat st;
    if (stat(path, &st) != 0 || st.st_dev != makedev(m->dev_major, m->dev_minor) ||
        (uint64_t)st.st_ino != m->inode) {
        snprintf(why, why_len, "code from %.*s, not the file now at that path", shown, m->path);
        return false;
    }
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, why_len, "code from %.*s (owner uid %u, mode %03o), which not only root "
                 "can change", shown, m->path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        return false;
    }
    return true;
}

/* Up to cap bytes of a /proc file into *buf (grown as needed); the
 * length, or -1.  *cut when there was more. */
static ssize_t read_file(int dirfd, const char *name, size_t cap, char **buf, size_t *size,
                         bool *cut)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    size_t len = 0;
    ssize_t n = 0;
    *cut = false;
    for (;;) {
        if (len == *size) {
            if (*size >= cap) {
                char probe;
                *cut = read(fd, &probe, 1) > 0;
                break;
            }
            *size = *size ? (*size * 2 < cap ? *size * 2 : cap) : 16384;
            *buf = xreallocarray(*buf, *size, 1);
        }
        n = read(fd, *buf + len, *size - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    return n < 0 && len == 0 ? -1 : (ssize_t)len;
}

static int check_parts(int dirfd, char **buf, size_t *size, char *why, size_t why_len)
{
    bool cut;
    ssize_t n = read_file(dirfd, "status", 64 * 1024, buf, size, &cut);
    if (n <= 0)
        return -1;
    if (!code_status_clean(*buf, (size_t)n, why, why_len))
        return 0;
    n = read_file(dirfd, "environ", CODE_ENV_CAP, buf, size, &cut);
    if (n < 0)
        return -1;
    if (cut) {
        snprintf(why, why_len, "an environment over %d KiB, not read through", CODE_ENV_CAP / 1024);
        return 0;
    }
    if (!code_environ_clean(*buf, (size_t)n, why, why_len))
        return 0;
    n = read_file(dirfd, "smaps", CODE_SMAPS_CAP, buf, size, &cut);
    if (n <= 0)
        return -1;
    if (cut) {
        snprintf(why, why_len, "memory mappings over %d MiB of smaps, not read through",
                 CODE_SMAPS_CAP / (1024 * 1024));
        return 0;
    }
    return code_smaps_clean(*buf, (size_t)n, code_file_is_roots, NULL, why, why_len);
}

int code_check(int dirfd, char *why, size_t why_len)
{
    char *buf = NULL;
    size_t size = 0;
    int verdict = check_parts(dirfd, &buf, &size, why, why_len);
    free(buf);
    return verdict;
}
