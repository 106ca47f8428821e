#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/notice_rate.h"
#include "safefile.h"
#include "util.h"

#define RATE_FILE "notified.json"
#define MAX_FILE_BYTES (16u << 20)

static struct notice_sent *find(const struct notice_rate *r, uid_t uid, enum notice_kind kind)
{
    for (size_t i = 0; i < r->count; i++)
        if (r->items[i].uid == uid && r->items[i].kind == kind)
            return &r->items[i];
    return NULL;
}

void notice_rate_note(struct notice_rate *r, uid_t uid, enum notice_kind kind, uint64_t time)
{
    struct notice_sent *s = find(r, uid, kind);
    if (!s) {
        r->items = grow_array(r->items, r->count, &r->capacity, sizeof(*r->items));
        s = &r->items[r->count++];
        s->uid = uid;
        s->kind = kind;
    }
    s->time = time;
}

bool notice_rate_due(const struct notice_rate *r, uid_t uid, enum notice_kind kind, uint64_t now,
                     uint64_t rate_limit)
{
    const struct notice_sent *s = find(r, uid, kind);
    return !(s && s->time <= now && now - s->time < rate_limit);
}

void notice_rate_forget(struct notice_rate *r, uid_t uid)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->count; i++)
        if (r->items[i].uid != uid)
            r->items[kept++] = r->items[i];
    r->count = kept;
}

void notice_rate_prune(struct notice_rate *r, uint64_t now, uint64_t rate_limit)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->count; i++)
        if (r->items[i].time <= now && now - r->items[i].time < rate_limit)
            r->items[kept++] = r->items[i];
    r->count = kept;
}

static int open_dir(const char *state_dir, char *err, size_t err_len)
{
    int fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        snprintf(err, err_len, "%s: cannot open the state directory: %s", state_dir,
                 strerror(errno));
    return fd;
}

int notice_rate_save(const struct notice_rate *r, const char *state_dir, char *err, size_t err_len)
{
    json_t *sent = json_array();
    for (size_t i = 0; i < r->count; i++)
        json_array_append_new(sent, json_pack("{s:I, s:s, s:I}", "uid", (json_int_t)r->items[i].uid,
                                              "kind", notice_kind_name(r->items[i].kind), "time",
                                              (json_int_t)r->items[i].time));
    json_t *root = json_pack("{s:o}", "sent", sent);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    int dirfd = open_dir(state_dir, err, err_len);
    int rc = dirfd >= 0 && text ? safe_write_file(dirfd, state_dir, RATE_FILE, text, err, err_len)
                                : -1;
    if (dirfd >= 0)
        close(dirfd);
    free(text);
    return rc;
}

static int kind_from_name(const char *name)
{
    for (int k = 0; name && k < NOTICE_KIND_COUNT; k++)
        if (strcmp(name, notice_kind_name((enum notice_kind)k)) == 0)
            return k;
    return -1;
}

int notice_rate_load(struct notice_rate *r, const char *state_dir, char *err, size_t err_len)
{
    int dirfd = open_dir(state_dir, err, err_len);
    if (dirfd < 0)
        return errno == ENOENT ? 0 : -1;
    char *text = NULL;
    size_t len;
    int rc = safe_read_file(dirfd, state_dir, RATE_FILE, MAX_FILE_BYTES, &text, &len, err, err_len);
    close(dirfd);
    if (rc == -2)
        return 0;
    json_t *root = rc == 0 ? json_loadb(text, len, 0, NULL) : NULL;
    free(text);
    json_t *sent = json_object_get(root, "sent");
    size_t i;
    json_t *o;
    json_array_foreach(sent, i, o) {
        json_int_t uid = json_integer_value(json_object_get(o, "uid"));
        json_int_t time = json_integer_value(json_object_get(o, "time"));
        int kind = kind_from_name(json_string_value(json_object_get(o, "kind")));
        /* A bad entry is dropped: at worst one notice too many. */
        if (kind >= 0 && uid > 0 && uid < (json_int_t)(uid_t)-1 && time > 0)
            notice_rate_note(r, (uid_t)uid, (enum notice_kind)kind, (uint64_t)time);
    }
    if (rc == 0 && !json_is_array(sent)) {
        snprintf(err, err_len, "%s/%s: not what loginguardd writes; the rate limit starts afresh",
                 state_dir, RATE_FILE);
        rc = -1;
    }
    json_decref(root);
    return rc < 0 ? -1 : 0;
}

void notice_rate_free(struct notice_rate *r)
{
    free(r->items);
    memset(r, 0, sizeof(*r));
}
