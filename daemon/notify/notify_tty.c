#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <utmpx.h>

#include "notify/notify_tty.h"
#include "observe/procfs.h"
#include "util.h"

#define PTS_MAJOR_FIRST 136 /* Unix98 ptys: majors 136..143, 256 minors each */
#define PTS_MAJOR_LAST 143
#define VT_MAJOR 4          /* ttyN (1..63) and ttySN (minor 64 + N) */
#define TTY_NAME_LEN 32

struct tty_candidate {
    dev_t dev;
    char name[TTY_NAME_LEN]; /* below /dev: "pts/3", "tty2" */
};

struct candidates {
    struct tty_candidate *items;
    size_t count, capacity;
};

/* The name a terminal device has below /dev, or -1 for a device that is
 * not a user's terminal (the console, /dev/tty, anything else). */
static int tty_name_of(dev_t dev, char *name, size_t len)
{
    unsigned ma = major(dev), mi = minor(dev);
    if (ma >= PTS_MAJOR_FIRST && ma <= PTS_MAJOR_LAST)
        snprintf(name, len, "pts/%u", (ma - PTS_MAJOR_FIRST) * 256 + mi);
    else if (ma == VT_MAJOR && mi >= 1 && mi < 64)
        snprintf(name, len, "tty%u", mi);
    else if (ma == VT_MAJOR && mi >= 64 && mi < 256)
        snprintf(name, len, "ttyS%u", mi - 64);
    else
        return -1;
    return 0;
}

/* The device a name stands for; -1 for any other name, so a utmp line
 * like "../sda" or "pts/3/x" never becomes a path. */
static int tty_dev_of(const char *name, dev_t *dev)
{
    unsigned n;
    char rest;
    const char *digits = NULL;
    if (strncmp(name, "pts/", 4) == 0)
        digits = name + 4;
    else if (strncmp(name, "ttyS", 4) == 0)
        digits = name + 4;
    else if (strncmp(name, "tty", 3) == 0)
        digits = name + 3;
    if (!digits || *digits < '0' || *digits > '9' || (digits[0] == '0' && digits[1]) ||
        sscanf(digits, "%u%c", &n, &rest) != 1 || n > 2047)
        return -1;
    char canonical[TTY_NAME_LEN];
    if (name[0] == 'p')
        *dev = makedev(PTS_MAJOR_FIRST + n / 256, n % 256);
    else
        *dev = makedev(VT_MAJOR, name[3] == 'S' ? 64 + n : n);
    return tty_name_of(*dev, canonical, sizeof(canonical)) == 0 &&
                   strcmp(canonical, name) == 0
               ? 0
               : -1;
}

static void add_candidate(struct candidates *c, dev_t dev, const char *name)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->items[i].dev == dev)
            return;
    c->items = grow_array(c->items, c->count, &c->capacity, sizeof(*c->items));
    c->items[c->count].dev = dev;
    copy_string(c->items[c->count].name, TTY_NAME_LEN, name);
    c->count++;
}

/* The controlling terminal of pid, when pid is uid's process. */
static void add_process_tty(struct candidates *c, const char *proc_root, uid_t uid, pid_t pid)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%d", proc_root, (int)pid);
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dirfd < 0)
        return;
    struct stat st;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    char buf[1024];
    struct proc_stat ps;
    if (fd >= 0 && fstat(dirfd, &st) == 0 && st.st_uid == uid) {
        ssize_t n = procfs_pread(fd, buf, sizeof(buf));
        if (n > 0 && procfs_parse_stat(buf, (size_t)n, &ps) == 0 && ps.tty_nr != 0) {
            /* The kernel's encoding of a device number in tty_nr. */
            unsigned nr = (unsigned)ps.tty_nr;
            dev_t dev = makedev((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xfff00));
            char name[TTY_NAME_LEN];
            if (tty_name_of(dev, name, sizeof(name)) == 0)
                add_candidate(c, dev, name);
        }
    }
    if (fd >= 0)
        close(fd);
    close(dirfd);
}

/* The user's login entries; a line that is no terminal name counts as a
 * refused candidate. */
static void add_utmp_ttys(struct candidates *c, const char *utmp_path, const char *user,
                          int *refused)
{
    if (!utmp_path || !user || !user[0])
        return;
    if (utmpxname(utmp_path) != 0)
        return;
    setutxent();
    struct utmpx *u;
    while ((u = getutxent())) {
        char line[sizeof(u->ut_line) + 1];
        if (u->ut_type != USER_PROCESS ||
            strncmp(u->ut_user, user, sizeof(u->ut_user)) != 0)
            continue;
        copy_string(line, sizeof(line), u->ut_line);
        dev_t dev;
        if (line[0] == ':')
            continue; /* an X display, no terminal */
        if (tty_dev_of(line, &dev) == 0)
            add_candidate(c, dev, line);
        else
            (*refused)++;
    }
    endutxent();
    utmpxname(_PATH_UTMPX);
}

/* Open the terminal named below dev_root without following a link at any
 * step, and only if it is what it claims to be and uid's. */
static int open_tty(int devfd, const struct tty_candidate *t, uid_t uid)
{
    char dir[TTY_NAME_LEN];
    copy_string(dir, sizeof(dir), t->name);
    char *slash = strchr(dir, '/');
    const char *base = t->name;
    int parent = devfd;
    if (slash) {
        *slash = '\0';
        base = slash + 1;
        parent = openat(devfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (parent < 0)
            return -1;
    }
    struct stat st;
    int fd = -1;
    /* Look before opening: opening someone else's terminal is already
     * more than we should do to it. */
    if (fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
        st.st_uid == uid && st.st_rdev == t->dev)
        fd = openat(parent, base, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (parent != devfd)
        close(parent);
    /* And check again what was opened: the name may have changed since. */
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_uid != uid ||
                    st.st_rdev != t->dev || !isatty(fd))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* text for a terminal: CRLF line ends (a terminal in raw mode does not
 * add the CR), no control characters, C1 ones in UTF-8 form included
 * (U+009B is CSI to some terminals); starts on a line of its own. */
static char *terminal_text(const char *text, size_t *len)
{
    size_t n = strlen(text);
    char *out = xmalloc(2 * n + 3), *p = out;
    *p++ = '\r';
    *p++ = '\n';
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '\n') {
            *p++ = '\r';
            *p++ = '\n';
        } else if (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
            s++;
        } else if (*s == '\t' || (*s >= 0x20 && *s != 0x7f)) {
            *p++ = (char)*s;
        }
    }
    *p = '\0';
    *len = (size_t)(p - out);
    return out;
}

int notify_tty(const struct environment *env, uid_t uid, const char *user, const pid_t *pids,
               size_t pid_count, const char *text, int *skipped)
{
    struct candidates c = {0};
    int refused = 0, written = 0;
    for (size_t i = 0; i < pid_count; i++)
        add_process_tty(&c, env->proc, uid, pids[i]);
    add_utmp_ttys(&c, env->utmp, user, &refused);
    int devfd = c.count ? open(env->dev, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    size_t len;
    char *out = terminal_text(text, &len);
    for (size_t i = 0; i < c.count; i++) {
        int fd = devfd >= 0 ? open_tty(devfd, &c.items[i], uid) : -1;
        if (fd >= 0 && write(fd, out, len) == (ssize_t)len)
            written++;
        else
            refused++;
        if (fd >= 0)
            close(fd);
    }
    if (devfd >= 0)
        close(devfd);
    free(out);
    free(c.items);
    if (skipped)
        *skipped = refused;
    return written;
}
