#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/login_notices.h"
#include "safefile.h"
#include "util.h"

#define MAX_FILE_BYTES (1u << 20)

/* STATE_DIR/login-notices, made if missing (0700: what users were told is for
 * root and, through the PAM module, for them). */
static int open_notices_dir(const char *state_dir, char **path, char *err, size_t err_len)
{
    *path = xasprintf("%s/login-notices", state_dir);
    if (mkdir(*path, 0700) < 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create: %s; check that %s exists and root can write it",
                 *path, strerror(errno), state_dir);
        return -1;
    }
    int fd = open(*path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf(err, err_len, "%s: cannot open: %s; it must be a directory, not a link", *path,
                 strerror(errno));
    return fd;
}

/* The user's list, or a new empty one when there is no file or it does
 * not parse (a notice is not worth refusing to keep the next one). */
static json_t *load_list(int dirfd, const char *dir, const char *name, char *err, size_t err_len)
{
    char *text = NULL;
    size_t len;
    int r = safe_read_file(dirfd, dir, name, MAX_FILE_BYTES, &text, &len, err, err_len);
    if (r == -1)
        return NULL;
    json_t *root = r == 0 ? json_loadb(text, len, 0, NULL) : NULL;
    free(text);
    json_t *list = json_object_get(root, "notices");
    if (!json_is_array(list)) {
        json_decref(root);
        return json_array();
    }
    json_incref(list);
    json_decref(root);
    return list;
}

static int save_list(int dirfd, const char *dir, const char *name, json_t *list, char *err,
                     size_t err_len)
{
    json_t *root = json_pack("{s:O}", "notices", list);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    int rc = text ? safe_write_file(dirfd, dir, name, text, err, err_len) : -1;
    if (!text)
        snprintf(err, err_len, "%s/%s: cannot encode: out of memory", dir, name);
    free(text);
    return rc;
}

/* Load, change, save one user's file.  change returns 0 when it changed
 * the list, 1 when it left it as it was (then nothing is written: a login
 * with nothing unread costs one read, no write). */
static int update(const char *state_dir, uid_t uid, int (*change)(json_t *list, void *arg),
                  void *arg, char *err, size_t err_len)
{
    char *dir;
    int dirfd = open_notices_dir(state_dir, &dir, err, err_len);
    char name[32];
    snprintf(name, sizeof(name), "%u.json", (unsigned)uid);
    int rc = -1;
    json_t *list = dirfd >= 0 ? load_list(dirfd, dir, name, err, err_len) : NULL;
    int changed = list ? change(list, arg) : -1;
    if (changed == 0)
        rc = save_list(dirfd, dir, name, list, err, err_len);
    else if (changed == 1)
        rc = 0;
    json_decref(list);
    if (dirfd >= 0)
        close(dirfd);
    free(dir);
    return rc;
}

static int append(json_t *list, void *arg)
{
    json_array_append(list, arg);
    while (json_array_size(list) > LOGIN_NOTICES_KEPT)
        json_array_remove(list, 0);
    return 0;
}

int login_notice_add(const char *state_dir, uid_t uid, uint64_t now, const char *kind,
                     const char *subject, const char *body, char *err, size_t err_len)
{
    json_t *n = json_pack("{s:I, s:s, s:s%, s:s%, s:b}", "time", (json_int_t)now, "kind", kind,
                          "subject", subject, strlen(subject), "body", body, strlen(body),
                          "read", 0);
    if (!n) {
        /* Rendered notices are valid UTF-8 (hostile bytes are escaped). */
        snprintf(err, err_len, "notice for uid %u: not valid UTF-8", (unsigned)uid);
        return -1;
    }
    int rc = update(state_dir, uid, append, n, err, err_len);
    json_decref(n);
    return rc;
}

static int take_unread(json_t *list, void *arg)
{
    json_t *out = arg;
    size_t i;
    json_t *n;
    json_array_foreach(list, i, n) {
        if (!json_is_object(n) || json_is_true(json_object_get(n, "read")))
            continue;
        json_t *copy = json_deep_copy(n);
        json_object_del(copy, "read");
        json_array_append_new(out, copy);
        json_object_set_new(n, "read", json_true());
    }
    return json_array_size(out) ? 0 : 1;
}

int login_notices_take(const char *state_dir, uid_t uid, json_t **out, char *err, size_t err_len)
{
    *out = json_array();
    if (update(state_dir, uid, take_unread, *out, err, err_len) < 0) {
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}
