#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libnotify/notify.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/become_user.h"
#include "base/child.h"
#include "notify/notify_desktop.h"
#include "util.h"

/* The child's exit statuses, turned into err by the parent. */
enum {
    DESKTOP_SENT = 0,
    DESKTOP_NOT_USER = 2,
    DESKTOP_NO_INIT = 3,
    DESKTOP_NOT_SHOWN = 4,
    DESKTOP_NO_LIBRARY = 5,
    DESKTOP_NO_ENTRY = 6,
};

/* libnotify is loaded by the child that sends a notice, never by the
 * daemon: with GLib, GIO, gdk-pixbuf and theirs it is some fifteen
 * libraries, 2.3 MiB of the daemon's resident memory for a channel that
 * is used a few times an hour, if ever. */
#define LIBNOTIFY_SONAME "libnotify.so.4"

struct libnotify {
    gboolean (*init)(const char *app_name);
    GList *(*get_server_caps)(void);
    NotifyNotification *(*notification_new)(const char *summary, const char *body,
                                            const char *icon);
    void (*set_urgency)(NotifyNotification *n, NotifyUrgency urgency);
    gboolean (*show)(NotifyNotification *n, GError **error);
    gchar *(*utf8_make_valid)(const gchar *str, gssize len);
    GList *(*list_find_custom)(GList *list, gconstpointer data, GCompareFunc func);
    void (*list_free_full)(GList *list, GDestroyNotify free_func);
    void (*free)(gpointer mem);
    gchar *(*markup_escape_text)(const gchar *text, gssize length);
};

/* In the child; GLib's functions come with libnotify, its dependency. */
static bool load_libnotify(struct libnotify *n)
{
    void *h = dlopen(LIBNOTIFY_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "loginguardd: desktop notices: %s\n", dlerror());
        return false;
    }
    static const char *const names[] = {
        "notify_init", "notify_get_server_caps", "notify_notification_new",
        "notify_notification_set_urgency", "notify_notification_show", "g_utf8_make_valid",
        "g_list_find_custom", "g_list_free_full", "g_free", "g_markup_escape_text",
    };
    void **slots[] = {
        (void **)&n->init, (void **)&n->get_server_caps, (void **)&n->notification_new,
        (void **)&n->set_urgency, (void **)&n->show, (void **)&n->utf8_make_valid,
        (void **)&n->list_find_custom, (void **)&n->list_free_full, (void **)&n->free,
        (void **)&n->markup_escape_text,
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = dlsym(h, names[i]);
        if (!*slots[i]) {
            fprintf(stderr, "loginguardd: desktop notices: %s has no %s\n", LIBNOTIFY_SONAME,
                    names[i]);
            return false;
        }
    }
    return true;
}

struct desktop_job {
    uid_t uid;
    gid_t gid;                  /* these three the child looks up */
    const char *user, *home;
    const char *runtime_dir;
    char *address;
    const char *summary, *body;
    bool urgent;
    pid_t parent;   /* the daemon: the child ends with it */
};

/* A D-Bus address value: bytes outside the safe set are %-escaped. */
static char *bus_address(const char *runtime_dir)
{
    static const char safe[] = "-_/.\\*";
    size_t n = strlen(runtime_dir);
    char *out = xmalloc(strlen("unix:path=") + 3 * n + strlen("/bus") + 1);
    char *p = stpcpy(out, "unix:path=");
    for (const unsigned char *s = (const unsigned char *)runtime_dir; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr(safe, *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02x", *s);
    }
    strcpy(p, "/bus");
    return out;
}

/* Does uid have a session bus there?  Neither the directory nor the
 * socket may be a link or someone else's. */
static bool has_session_bus(uid_t uid, const char *runtime_dir)
{
    int dirfd = open(runtime_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0)
        return false;
    struct stat dir, bus;
    bool ok = fstat(dirfd, &dir) == 0 && dir.st_uid == uid &&
              fstatat(dirfd, "bus", &bus, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(bus.st_mode) &&
              bus.st_uid == uid;
    close(dirfd);
    return ok;
}

/* Valid UTF-8 (D-Bus requires it) without control characters. */
static char *clean_text(const struct libnotify *n, const char *s)
{
    char *valid = n->utf8_make_valid(s, -1);
    char *p = valid;
    for (char *q = valid; *q; q++)
        if (*q == '\n' || *q == '\t' || ((unsigned char)*q >= 0x20 && *q != 0x7f))
            *p++ = *q;
    *p = '\0';
    return valid;
}

static bool server_reads_markup(const struct libnotify *n)
{
    GList *caps = n->get_server_caps();
    bool markup = n->list_find_custom(caps, "body-markup", (GCompareFunc)strcmp) != NULL;
    n->list_free_full(caps, n->free);
    return markup;
}

static int send_notice(void *arg)
{
    struct desktop_job *job = arg;
    /* Looked up here, not in the daemon: a slow directory (LDAP, SSSD)
     * holds up this child only. */
    struct passwd pw, *found = NULL;
    char pwbuf[4096];
    if (getpwuid_r(job->uid, &pw, pwbuf, sizeof(pwbuf), &found) != 0 || !found)
        return DESKTOP_NO_ENTRY;
    job->gid = found->pw_gid;
    job->user = found->pw_name;
    job->home = found->pw_dir;
    if (!become_user(job->user, job->uid, job->gid, job->parent))
        return DESKTOP_NOT_USER;
    if (chdir("/") != 0 || clearenv() != 0 ||
        setenv("DBUS_SESSION_BUS_ADDRESS", job->address, 1) != 0 ||
        setenv("XDG_RUNTIME_DIR", job->runtime_dir, 1) != 0 || setenv("HOME", job->home, 1) ||
        setenv("USER", job->user, 1) != 0 || setenv("LOGNAME", job->user, 1) != 0)
        return DESKTOP_NOT_USER;
    struct libnotify lib;
    if (!load_libnotify(&lib))
        return DESKTOP_NO_LIBRARY;
    if (!lib.init("loginguard"))
        return DESKTOP_NO_INIT;
    char *summary = clean_text(&lib, job->summary), *body = clean_text(&lib, job->body);
    if (server_reads_markup(&lib)) {
        char *escaped = lib.markup_escape_text(body, -1);
        lib.free(body);
        body = escaped;
    }
    NotifyNotification *n = lib.notification_new(summary, body, NULL);
    lib.set_urgency(n, job->urgent ? NOTIFY_URGENCY_CRITICAL : NOTIFY_URGENCY_NORMAL);
    GError *error = NULL;
    if (!lib.show(n, &error)) {
        /* The message comes from the user's own bus: made one printable
         * line before it reaches the daemon's log. */
        char *why = clean_text(&lib, error ? error->message : "unknown error");
        for (char *q = why; *q; q++)
            if (*q == '\n' || *q == '\t')
                *q = ' ';
        fprintf(stderr, "loginguardd: desktop notice to %s: %s\n", job->user, why);
        return DESKTOP_NOT_SHOWN;
    }
    return DESKTOP_SENT;
}

static enum notify_outcome outcome_of(int status, const struct desktop_send *s, char *err,
                                      size_t err_len)
{
    if (WIFEXITED(status)) {
        switch (WEXITSTATUS(status)) {
        case DESKTOP_SENT:
            return NOTIFY_SENT;
        case DESKTOP_NOT_USER:
            snprintf(err, err_len, "the desktop notice child could not become %s (uid %u) "
                     "fully; nothing was sent", s->user, (unsigned)s->uid);
            return NOTIFY_FAILED;
        case DESKTOP_NO_ENTRY:
            snprintf(err, err_len, "no user with uid %u in the user database; nothing was sent",
                     (unsigned)s->uid);
            return NOTIFY_FAILED;
        case DESKTOP_NO_LIBRARY:
            snprintf(err, err_len, "the desktop notice child could not load %s (install "
                     "libnotify4); nothing was sent", LIBNOTIFY_SONAME);
            return NOTIFY_FAILED;
        case DESKTOP_NOT_SHOWN:
            snprintf(err, err_len, "no notification server on %s's session bus took the "
                     "notice (%s)", s->user, s->address);
            return NOTIFY_FAILED;
        default:
            break;
        }
    }
    char how[64];
    child_describe_status(status, how, sizeof(how));
    snprintf(err, err_len, "the desktop notice child for %s %s", s->user, how);
    return NOTIFY_FAILED;
}

enum notify_outcome notify_desktop_start(struct desktop_send *s, uid_t uid, const char *user,
                                         const char *runtime_dir, const char *summary,
                                         const char *body, bool urgent, uint64_t timeout_usec,
                                         char *err, size_t err_len)
{
    memset(s, 0, sizeof(*s));
    if (uid == 0) {
        snprintf(err, err_len, "desktop notices are never sent as root");
        return NOTIFY_FAILED;
    }
    if (!has_session_bus(uid, runtime_dir)) {
        snprintf(err, err_len, "no session bus of uid %u at %s/bus", (unsigned)uid, runtime_dir);
        return NOTIFY_SKIPPED;
    }
    struct desktop_job job = {
        .uid = uid,
        .runtime_dir = runtime_dir,
        .address = bus_address(runtime_dir),
        .summary = summary,
        .body = body,
        .urgent = urgent,
        .parent = getpid(),
    };
    s->uid = uid;
    char by_uid[32];
    snprintf(by_uid, sizeof(by_uid), "uid %u", (unsigned)uid);
    s->user = xstrdup(user && user[0] ? user : by_uid);
    s->address = job.address; /* the child has its own copy of the job */
    s->timeout_usec = timeout_usec;
    if (child_start(&s->child, send_notice, &job, NULL, 0, timeout_usec) == 0)
        return NOTIFY_PENDING;
    snprintf(err, err_len, "could not fork the desktop notice child: %s", strerror(errno));
    notify_desktop_free(s);
    return NOTIFY_FAILED;
}

enum notify_outcome notify_desktop_finish(struct desktop_send *s, enum child_result result,
                                          int status, char *err, size_t err_len)
{
    enum notify_outcome outcome = NOTIFY_FAILED;
    if (result == CHILD_TIMED_OUT)
        snprintf(err, err_len, "the desktop notice to %s took more than %llu ms and was "
                 "stopped; is the session bus at %s hung?", s->user,
                 (unsigned long long)(s->timeout_usec / 1000), s->address);
    else
        outcome = outcome_of(status, s, err, err_len);
    notify_desktop_free(s);
    return outcome;
}

void notify_desktop_free(struct desktop_send *s)
{
    free(s->user);
    free(s->address);
    s->user = s->address = NULL;
}

enum notify_outcome notify_desktop(uid_t uid, const char *user, const char *runtime_dir, const char *summary,
                                   const char *body, bool urgent, uint64_t timeout_usec, char *err,
                                   size_t err_len)
{
    struct desktop_send s;
    enum notify_outcome o = notify_desktop_start(&s, uid, user, runtime_dir, summary, body, urgent,
                                                 timeout_usec, err, err_len);
    if (o != NOTIFY_PENDING)
        return o;
    int status = 0;
    enum child_result result = child_wait(&s.child, &status);
    return notify_desktop_finish(&s, result, status, err, err_len);
}
