#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "units.h"
#include "util.h"

#define TMP_FILE STATE_FILE ".tmp"
/* About 200 bytes a user: room for some 300,000 users.  Anything bigger
 * was not written by us. */
#define MAX_FILE_BYTES (64u << 20)
/* state.json.bad-<seconds>, then .1, .2...: bad files are kept, never
 * overwritten, but not without end. */
#define MAX_BAD_SUFFIX 100

/* The directory is taken as the admin named it (it may well be a symlink
 * to another disk); only the files in it are opened without following
 * symlinks, each relative to this descriptor so the checks and the use
 * are on the same directory. */
static int open_state_dir(const char *dir)
{
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* ------------------------------------------------------------------ */
/* Saving */

/* The same test forget_idle_users makes in the engine, without the
 * window: a user who is only being watched has nothing to lose. */
static bool worth_saving(const struct user_state *u)
{
    return u->level > 0 || u->until || u->exempt_until || u->violations;
}

/* json_int_t is signed.  Durations are capped at ten years, so no real
 * time comes near INT64_MAX (year 294,000); one that did is clamped
 * rather than written negative, which the loader would refuse. */
static json_t *json_usec(uint64_t usec)
{
    return json_integer(usec > INT64_MAX ? INT64_MAX : (json_int_t)usec);
}

static json_t *user_to_json(const struct user_state *u)
{
    json_t *o = json_object();
    json_object_set_new(o, "uid", json_integer((json_int_t)u->uid));
    json_object_set_new(o, "level", json_integer(u->level));
    json_object_set_new(o, "since", json_usec(u->since));
    json_object_set_new(o, "until", json_usec(u->until));
    json_object_set_new(o, "quiet_since", json_usec(u->quiet_since));
    json_object_set_new(o, "last_violation", json_usec(u->last_violation));
    json_object_set_new(o, "violations", json_integer((json_int_t)u->violations));
    json_object_set_new(o, "exempt_until", json_usec(u->exempt_until));
    return o;
}

/* The whole file's text, or NULL if jansson ran out of memory. */
static char *state_to_text(const struct engine_state *st, uint64_t now)
{
    json_t *users = json_array();
    for (size_t i = 0; i < st->user_count; i++)
        if (worth_saving(&st->users[i]))
            json_array_append_new(users, user_to_json(&st->users[i]));
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(STATE_VERSION));
    json_object_set_new(root, "saved", json_usec(now));
    json_object_set_new(root, "users", users);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return text;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* text into DIR/state.json.tmp, on disk before the caller renames it: a
 * rename that reached the disk before the data would leave an empty
 * state.json after a power cut. */
static int write_tmp(int dirfd, const char *dir, const char *text, char *err, size_t err_len)
{
    /* A leftover of a crash, or something planted there: removed, never
     * written through.  With O_EXCL the open neither follows a symlink
     * nor truncates a hard link to some other file, as O_TRUNC on an
     * existing name would. */
    if (unlinkat(dirfd, TMP_FILE, 0) < 0 && errno != ENOENT) {
        snprintf(err, err_len, "%s/%s: cannot remove the old temporary file: %s; remove it by hand",
                 dir, TMP_FILE, strerror(errno));
        return -1;
    }
    int fd = openat(dirfd, TMP_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_len,
                 "%s/%s: cannot create: %s; check that %s is a directory root can write", dir,
                 TMP_FILE, strerror(errno), dir);
        return -1;
    }
    /* 0600 whatever the daemon's umask: who is penalised, and who is
     * exempt until when, is for root to read. */
    if (fchmod(fd, 0600) < 0 || write_all(fd, text, strlen(text)) < 0 ||
        write_all(fd, "\n", 1) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlinkat(dirfd, TMP_FILE, 0);
        snprintf(err, err_len, "%s/%s: cannot write: %s; check the space left on its file system",
                 dir, TMP_FILE, strerror(e));
        return -1;
    }
    if (close(fd) < 0) {
        int e = errno;
        unlinkat(dirfd, TMP_FILE, 0);
        snprintf(err, err_len, "%s/%s: cannot write: %s; check the space left on its file system",
                 dir, TMP_FILE, strerror(e));
        return -1;
    }
    return 0;
}

int state_save(const char *dir, const struct engine_state *st, uint64_t now, char *err,
               size_t err_len)
{
    int dirfd = open_state_dir(dir);
    if (dirfd < 0) {
        snprintf(err, err_len,
                 "%s: cannot open the state directory: %s; create it (owned by root, mode 0700) "
                 "or set state_dir in loginguard.conf",
                 dir, strerror(errno));
        return -1;
    }
    int rc = -1;
    char *text = state_to_text(st, now);
    if (!text) {
        snprintf(err, err_len, "%s/%s: cannot encode the state: out of memory", dir, STATE_FILE);
    } else if (write_tmp(dirfd, dir, text, err, err_len) == 0) {
        if (renameat(dirfd, TMP_FILE, dirfd, STATE_FILE) < 0) {
            snprintf(err, err_len,
                     "%s/%s: cannot replace it with %s: %s; check that it is not a directory", dir,
                     STATE_FILE, TMP_FILE, strerror(errno));
            unlinkat(dirfd, TMP_FILE, 0);
        } else if (fsync(dirfd) < 0) {
            /* The new file is in place, but its name may not be on disk. */
            snprintf(err, err_len,
                     "%s: cannot sync the state directory: %s; the state saved may not survive a "
                     "power cut",
                     dir, strerror(errno));
        } else {
            rc = 0;
        }
    }
    free(text);
    close(dirfd);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Loading */

/* All of fd into *out (NUL-terminated, to be freed).  Returns 0, -1 with
 * errno, or 1 if the file is larger than any state we write (*out is then
 * left alone). */
static int read_all(int fd, char **out, size_t *len)
{
    size_t used = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        if (used + 1 >= cap) {
            if (cap > MAX_FILE_BYTES) {
                free(buf);
                return 1;
            }
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return 0;
}

/* An integer field of o between min and max, or -1 with why. */
static int get_integer(const json_t *o, const char *key, json_int_t min, json_int_t max,
                       json_int_t *out, char *why, size_t why_len)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        snprintf(why, why_len, "\"%s\" is missing", key);
        return -1;
    }
    if (!json_is_integer(v)) {
        snprintf(why, why_len, "\"%s\" is not an integer", key);
        return -1;
    }
    json_int_t x = json_integer_value(v);
    if (x < min || x > max) {
        snprintf(why, why_len,
                 "\"%s\" is %" JSON_INTEGER_FORMAT ", not between %" JSON_INTEGER_FORMAT
                 " and %" JSON_INTEGER_FORMAT,
                 key, x, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

static int get_time(const json_t *o, const char *key, uint64_t *out, char *why, size_t why_len)
{
    json_int_t x;
    if (get_integer(o, key, 0, INT64_MAX, &x, why, why_len) < 0)
        return -1;
    *out = (uint64_t)x;
    return 0;
}

/* One element of "users" into st.  Every field is required: a file
 * missing one was not written by this version, and guessing a default
 * for a penalty is how one gets lost. */
static int parse_user(const json_t *o, struct engine_state *st, char *why, size_t why_len)
{
    if (!json_is_object(o)) {
        snprintf(why, why_len, "not an object");
        return -1;
    }
    /* (uid_t)-1 is "no user" to the kernel's calls, never a login. */
    json_int_t uid, level, violations;
    if (get_integer(o, "uid", 0, (json_int_t)(uid_t)-1 - 1, &uid, why, why_len) < 0 ||
        get_integer(o, "level", 0, STATE_MAX_LEVEL, &level, why, why_len) < 0 ||
        get_integer(o, "violations", 0, UINT32_MAX, &violations, why, why_len) < 0)
        return -1;
    if (engine_user(st, (uid_t)uid, false)) {
        snprintf(why, why_len, "uid %" JSON_INTEGER_FORMAT " is listed twice", uid);
        return -1;
    }
    struct user_state u = {.uid = (uid_t)uid, .level = (int)level,
                           .violations = (uint32_t)violations};
    if (get_time(o, "since", &u.since, why, why_len) < 0 ||
        get_time(o, "until", &u.until, why, why_len) < 0 ||
        get_time(o, "quiet_since", &u.quiet_since, why, why_len) < 0 ||
        get_time(o, "last_violation", &u.last_violation, why, why_len) < 0 ||
        get_time(o, "exempt_until", &u.exempt_until, why, why_len) < 0)
        return -1;
    /* engine_user zeroes the rest: the window starts afresh. */
    *engine_user(st, u.uid, true) = u;
    return 0;
}

/* The whole text into st, or -1 with why (st then holds whatever was
 * parsed before; the caller throws it away). */
static int parse_state(const char *text, size_t len, struct engine_state *st, char *why,
                       size_t why_len)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(why, why_len, "not valid JSON (line %d: %s)", jerr.line, jerr.text);
        return -1;
    }
    int rc = -1;
    json_int_t version, saved;
    const json_t *users = json_object_get(root, "users");
    if (!json_is_object(root)) {
        snprintf(why, why_len, "not a JSON object");
    } else if (get_integer(root, "version", 0, INT64_MAX, &version, why, why_len) < 0) {
        /* why is set */
    } else if (version != STATE_VERSION) {
        snprintf(why, why_len, "version %" JSON_INTEGER_FORMAT ", this loginguardd reads %d",
                 version, STATE_VERSION);
    } else if (get_integer(root, "saved", 0, INT64_MAX, &saved, why, why_len) < 0) {
        /* why is set */
    } else if (!json_is_array(users)) {
        snprintf(why, why_len, "\"users\" is %s", users ? "not an array" : "missing");
    } else {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < json_array_size(users); i++) {
            char what[200];
            if (parse_user(json_array_get(users, i), st, what, sizeof(what)) < 0) {
                snprintf(why, why_len, "users[%zu]: %s", i, what);
                rc = -1;
            }
        }
    }
    json_decref(root);
    return rc;
}

/* Rename DIR/state.json to the first free state.json.bad-<seconds>[.N]. */
static int move_aside(int dirfd, const char *dir, uint64_t now, char *moved_to, size_t moved_len,
                      char *err, size_t err_len)
{
    char name[64];
    for (unsigned i = 0; i < MAX_BAD_SUFFIX; i++) {
        int n = snprintf(name, sizeof(name), "%s.bad-%" PRIu64, STATE_FILE,
                         (uint64_t)(now / USEC_PER_SEC));
        if (i > 0)
            snprintf(name + n, sizeof(name) - (size_t)n, ".%u", i);
        struct stat sb;
        if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        if (errno != ENOENT || renameat(dirfd, STATE_FILE, dirfd, name) < 0) {
            snprintf(err, err_len, "%s/%s: cannot move it aside to %s: %s; remove it by hand", dir,
                     STATE_FILE, name, strerror(errno));
            return -1;
        }
        snprintf(moved_to, moved_len, "%s/%s", dir, name);
        return 0;
    }
    snprintf(err, err_len,
             "%s/%s: cannot move it aside: %d %s.bad-* files already; remove old ones", dir,
             STATE_FILE, MAX_BAD_SUFFIX, STATE_FILE);
    return -1;
}

/* Open DIR/state.json for reading if it is a regular file only root can
 * change.  Returns the descriptor, -1 with err, or -2 if absent. */
static int open_state_file(int dirfd, const char *dir, char *err, size_t err_len)
{
    /* O_NONBLOCK: a FIFO planted there must not hang the daemon's start. */
    int fd = openat(dirfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return -2;
    if (fd < 0 && errno == ELOOP) {
        snprintf(err, err_len,
                 "%s/%s: is a symbolic link, which loginguardd does not follow; replace it with "
                 "the file itself, or remove it to start with no penalties",
                 dir, STATE_FILE);
        return -1;
    }
    if (fd < 0) {
        snprintf(err, err_len, "%s/%s: cannot open: %s; check its owner and mode (root, 0600)", dir,
                 STATE_FILE, strerror(errno));
        return -1;
    }
    struct stat sb;
    const char *wrong = NULL;
    if (fstat(fd, &sb) < 0)
        wrong = strerror(errno);
    else if (!S_ISREG(sb.st_mode))
        wrong = "not a regular file";
    /* A file someone else can write would let them exempt themselves. */
    else if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
        wrong = "owned by another user or writable by others";
    if (wrong) {
        snprintf(err, err_len,
                 "%s/%s: %s; remove it (penalties start afresh) or make it a regular file owned "
                 "by root, mode 0600",
                 dir, STATE_FILE, wrong);
        close(fd);
        return -1;
    }
    return fd;
}

/* Read and parse an open state file into st; on a bad file, move it
 * aside. */
static enum state_load_result load_from(int dirfd, int fd, const char *dir, struct engine_state *st,
                                        uint64_t now, char *moved_to, size_t moved_len, char *err,
                                        size_t err_len)
{
    char *text = NULL;
    size_t len;
    char why[300];
    int r = read_all(fd, &text, &len);
    if (r < 0) {
        snprintf(err, err_len, "%s/%s: cannot read: %s; check the disk", dir, STATE_FILE,
                 strerror(errno));
        return STATE_ERROR;
    }
    struct engine_state parsed = {0};
    if (r > 0)
        snprintf(why, sizeof(why), "larger than %u bytes", MAX_FILE_BYTES);
    else if (parse_state(text, len, &parsed, why, sizeof(why)) == 0) {
        free(text);
        st->users = parsed.users;
        st->user_count = parsed.user_count;
        st->user_capacity = parsed.user_capacity;
        return STATE_LOADED;
    }
    free(text);
    engine_state_free(&parsed);
    if (move_aside(dirfd, dir, now, moved_to, moved_len, err, err_len) < 0)
        return STATE_ERROR;
    snprintf(err, err_len, "%s/%s: %s; moved to %s, starting with no penalties", dir, STATE_FILE,
             why, moved_to);
    return STATE_MOVED_ASIDE;
}

enum state_load_result state_load(const char *dir, struct engine_state *st, uint64_t now,
                                  char *moved_to, size_t moved_len, char *err, size_t err_len)
{
    if (moved_len)
        moved_to[0] = '\0';
    if (err_len)
        err[0] = '\0';
    if (st->user_count) {
        snprintf(err, err_len, "%s/%s: not loaded: the engine already holds users", dir,
                 STATE_FILE);
        return STATE_ERROR;
    }
    int dirfd = open_state_dir(dir);
    if (dirfd < 0 && errno == ENOENT)
        return STATE_ABSENT;
    if (dirfd < 0) {
        snprintf(err, err_len, "%s: cannot open the state directory: %s; check its owner and mode",
                 dir, strerror(errno));
        return STATE_ERROR;
    }
    enum state_load_result res = STATE_ABSENT;
    int fd = open_state_file(dirfd, dir, err, err_len);
    if (fd == -1)
        res = STATE_ERROR;
    else if (fd >= 0) {
        res = load_from(dirfd, fd, dir, st, now, moved_to, moved_len, err, err_len);
        close(fd);
    }
    close(dirfd);
    return res;
}
