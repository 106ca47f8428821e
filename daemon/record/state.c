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

#include "record/state.h"
#include "safefile.h"
#include "units.h"
#include "util.h"

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
    if (u->last_reason != VIOLATION_REASON_NONE)
        json_object_set_new(o, "last", json_pack("{s:s, s:f, s:o, s:o}", "reason",
                                                 violation_reason_name(u->last_reason), "cpu",
                                                 u->last_cpu, "memory", json_usec(u->last_memory),
                                                 "window", json_usec(u->last_window)));
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
    if (!text)
        snprintf(err, err_len, "%s/%s: cannot encode the state: out of memory", dir, STATE_FILE);
    else
        rc = safe_write_file(dirfd, dir, STATE_FILE, text, err, err_len);
    free(text);
    close(dirfd);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Loading */

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

/* The optional "last": what the last violation was about.  Files written
 * before it existed have none; what is there must be whole. */
static int parse_last(const json_t *o, struct user_state *u, char *why, size_t why_len)
{
    const json_t *last = json_object_get(o, "last");
    if (!last)
        return 0;
    const char *reason = json_string_value(json_object_get(last, "reason"));
    const json_t *cpu = json_object_get(last, "cpu");
    for (int r = VIOLATION_REASON_NONE + 1; reason && r < VIOLATION_REASON_COUNT; r++)
        if (strcmp(reason, violation_reason_name(r)) == 0)
            u->last_reason = r;
    if (u->last_reason == VIOLATION_REASON_NONE || !json_is_number(cpu) ||
        !(json_number_value(cpu) >= 0 && json_number_value(cpu) <= 1e6)) {
        snprintf(why, why_len, "\"last\" needs a \"reason\" (cpu, memory or memory_pressure) "
                 "and \"cpu\" between 0 and 1e6");
        return -1;
    }
    u->last_cpu = json_number_value(cpu);
    return get_time(last, "memory", &u->last_memory, why, why_len) < 0 ||
                   get_time(last, "window", &u->last_window, why, why_len) < 0
               ? -1
               : 0;
}

/* One element of "users" into st.  Every field but "last" is required: a
 * file missing one was not written by this version, and guessing a
 * default for a penalty is how one gets lost. */
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
        get_time(o, "exempt_until", &u.exempt_until, why, why_len) < 0 ||
        parse_last(o, &u, why, why_len) < 0)
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

/* Read and parse DIR/state.json into st; on a bad file, move it aside. */
static enum state_load_result load_from(int dirfd, const char *dir, struct engine_state *st,
                                        uint64_t now, char *moved_to, size_t moved_len, char *err,
                                        size_t err_len)
{
    char *text = NULL;
    size_t len;
    char why[300];
    int r = safe_read_file(dirfd, dir, STATE_FILE, MAX_FILE_BYTES, &text, &len, err, err_len);
    if (r == -2)
        return STATE_ABSENT;
    if (r < 0)
        return STATE_ERROR;
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
    enum state_load_result res = load_from(dirfd, dir, st, now, moved_to, moved_len, err, err_len);
    close(dirfd);
    return res;
}
