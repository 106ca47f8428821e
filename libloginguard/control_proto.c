#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_proto.h"
#include "util.h"

static const char *const op_names[] = {
    [CONTROL_STATUS] = "status", [CONTROL_USER] = "user", [CONTROL_FORGIVE] = "forgive",
    [CONTROL_EXEMPT] = "exempt", [CONTROL_RELOAD] = "reload", [CONTROL_WHY] = "why",
    [CONTROL_METRICS] = "metrics", [CONTROL_SESSION] = "session", [CONTROL_ACCOUNT] = "account",
};

static const char *const code_names[] = {
    [CONTROL_BAD_REQUEST] = "bad_request", [CONTROL_BAD_VERSION] = "bad_version",
    [CONTROL_TOO_LONG] = "too_long",       [CONTROL_REFUSED] = "refused",
    [CONTROL_NO_SUCH_USER] = "no_such_user", [CONTROL_FAILED] = "failed",
    [CONTROL_INVALID_CONFIG] = "invalid_config",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *control_op_name(enum control_op op)
{
    return op_names[op];
}

const char *control_code_name(enum control_code code)
{
    return code_names[code];
}

static int fail(struct control_error *err, enum control_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct control_error *err, enum control_code code, const char *fmt, ...)
{
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    /* Messages quote pieces of the request (a key, jansson's view of
     * where parsing failed), which may be cut inside a UTF-8 sequence or
     * hold controls: the reply must stay valid JSON and safe to print. */
    for (char *p = err->message; *p; p++)
        if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f)
            *p = '?';
    return -1;
}

bool control_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > CONTROL_NAME_MAX || name[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c == 0x7f || c == ':' || c == '/')
            return false;
    }
    return true;
}

/* Reasons end up in events and on terminals: printable text only (UTF-8
 * is checked by jansson; C0 controls and DEL are refused here). */
static bool reason_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < ' ' || c == 0x7f)
            return false;
    }
    return true;
}

/* Which keys each request takes besides "version" and "request". */
static bool key_allowed(enum control_op op, const char *key)
{
    switch (op) {
    case CONTROL_STATUS:
        return strcmp(key, "all") == 0;
    case CONTROL_USER:
        return strcmp(key, "user") == 0;
    case CONTROL_FORGIVE:
        return strcmp(key, "user") == 0 || strcmp(key, "reason") == 0;
    case CONTROL_EXEMPT:
        return strcmp(key, "user") == 0 || strcmp(key, "reason") == 0 ||
               strcmp(key, "for") == 0 || strcmp(key, "remove") == 0;
    case CONTROL_RELOAD:
        return false;
    case CONTROL_WHY:
        return strcmp(key, "pid") == 0;
    case CONTROL_METRICS:
        return false;
    case CONTROL_SESSION:
        return strcmp(key, "user") == 0 || strcmp(key, "notices") == 0;
    case CONTROL_ACCOUNT:
        return strcmp(key, "user") == 0 || strcmp(key, "deny_level") == 0;
    }
    return false;
}

static int parse_op(const json_t *root, struct control_request *req, struct control_error *err)
{
    const json_t *v = json_object_get(root, "version");
    if (!v)
        return fail(err, CONTROL_BAD_REQUEST, "\"version\" is missing (this daemon speaks %d)",
                    CONTROL_VERSION);
    if (!json_is_integer(v) || json_integer_value(v) != CONTROL_VERSION)
        return fail(err, CONTROL_BAD_VERSION, "this daemon speaks protocol version %d",
                    CONTROL_VERSION);
    const json_t *r = json_object_get(root, "request");
    if (!json_is_string(r))
        return fail(err, CONTROL_BAD_REQUEST, "\"request\" is %s",
                    r ? "not a string" : "missing");
    for (size_t i = 0; i < COUNT(op_names); i++) {
        if (strcmp(json_string_value(r), op_names[i]) == 0) {
            req->op = (enum control_op)i;
            return 0;
        }
    }
    return fail(err, CONTROL_BAD_REQUEST,
                "unknown request (known: status, user, forgive, exempt, reload, why, metrics, "
                "session, account)");
}

static int parse_user(const json_t *v, struct control_request *req, struct control_error *err)
{
    if (json_is_integer(v)) {
        json_int_t uid = json_integer_value(v);
        /* (uid_t)-1 is "no user" to the kernel's calls, never a login. */
        if (uid < 0 || uid >= (json_int_t)(uid_t)-1)
            return fail(err, CONTROL_BAD_REQUEST, "\"user\" is not a valid uid");
        req->by_uid = true;
        req->uid = (uid_t)uid;
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (!control_name_ok(s, len))
            return fail(err, CONTROL_NO_SUCH_USER, "no user has that name");
        memcpy(req->name, s, len);
        req->name[len] = '\0';
    } else {
        return fail(err, CONTROL_BAD_REQUEST, "\"user\" is not a name or a uid");
    }
    req->has_user = true;
    return 0;
}

static int parse_fields(const json_t *root, struct control_request *req,
                        struct control_error *err)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        if (strcmp(key, "version") == 0 || strcmp(key, "request") == 0)
            continue;
        if (!key_allowed(req->op, key))
            return fail(err, CONTROL_BAD_REQUEST, "\"%s\" takes no field \"%.40s\"",
                        op_names[req->op], key);
        if (strcmp(key, "user") == 0) {
            if (parse_user(v, req, err) < 0)
                return -1;
        } else if (strcmp(key, "all") == 0 || strcmp(key, "remove") == 0 ||
                   strcmp(key, "notices") == 0) {
            if (!json_is_boolean(v))
                return fail(err, CONTROL_BAD_REQUEST, "\"%s\" is not true or false", key);
            *(key[0] == 'a' ? &req->all : key[0] == 'r' ? &req->remove : &req->notices) =
                json_is_true(v);
        } else if (strcmp(key, "deny_level") == 0) {
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > CONTROL_LEVEL_MAX)
                return fail(err, CONTROL_BAD_REQUEST,
                            "\"deny_level\" is not a number from 0 to %d", CONTROL_LEVEL_MAX);
            req->deny_level = (int)json_integer_value(v);
        } else if (strcmp(key, "reason") == 0) {
            size_t len = json_is_string(v) ? json_string_length(v) : 0;
            if (!json_is_string(v) || len > CONTROL_REASON_MAX ||
                !reason_ok(json_string_value(v), len))
                return fail(err, CONTROL_BAD_REQUEST,
                            "\"reason\" is not text of at most %d bytes without control "
                            "characters", CONTROL_REASON_MAX);
            memcpy(req->reason, json_string_value(v), len);
            req->reason[len] = '\0';
        } else if (strcmp(key, "pid") == 0) {
            if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                json_integer_value(v) > CONTROL_PID_MAX)
                return fail(err, CONTROL_BAD_REQUEST, "\"pid\" is not a number from 1 to %d",
                            CONTROL_PID_MAX);
            req->pid = (pid_t)json_integer_value(v);
        } else { /* "for" */
            if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                (uint64_t)json_integer_value(v) > CONTROL_EXEMPT_MAX_SEC)
                return fail(err, CONTROL_BAD_REQUEST,
                            "\"for\" is not a number of seconds from 1 to %llu",
                            (unsigned long long)CONTROL_EXEMPT_MAX_SEC);
            req->duration = (uint64_t)json_integer_value(v);
        }
    }
    return 0;
}

/* What each request needs, beyond the types of its fields. */
static int check_complete(struct control_request *req, struct control_error *err)
{
    if ((req->op == CONTROL_FORGIVE || req->op == CONTROL_EXEMPT) && !req->has_user)
        return fail(err, CONTROL_BAD_REQUEST, "\"%s\" needs \"user\"", op_names[req->op]);
    if ((req->op == CONTROL_SESSION || req->op == CONTROL_ACCOUNT) && !req->has_user)
        return fail(err, CONTROL_BAD_REQUEST, "\"%s\" needs \"user\"", op_names[req->op]);
    if (req->op == CONTROL_WHY && !req->pid)
        return fail(err, CONTROL_BAD_REQUEST, "\"why\" needs \"pid\"");
    if (req->op != CONTROL_EXEMPT)
        return 0;
    if (req->remove && req->duration)
        return fail(err, CONTROL_BAD_REQUEST, "\"exempt\" takes \"for\" or \"remove\", not both");
    if (!req->remove && !req->duration)
        return fail(err, CONTROL_BAD_REQUEST, "\"exempt\" needs \"for\" (seconds) or \"remove\"");
    if (!req->remove && !req->reason[0])
        return fail(err, CONTROL_BAD_REQUEST, "\"exempt\" needs a \"reason\"");
    return 0;
}

int control_parse_request(const char *line, size_t len, struct control_request *req,
                          struct control_error *err)
{
    memset(req, 0, sizeof(*req));
    memset(err, 0, sizeof(*err));
    if (len >= CONTROL_LINE_MAX)
        return fail(err, CONTROL_TOO_LONG, "a request is at most %d bytes", CONTROL_LINE_MAX - 1);
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return fail(err, CONTROL_BAD_REQUEST, "not JSON (column %d: %.100s)", jerr.column,
                    jerr.text);
    /* A session shows (and marks read) the user's notices unless told not to. */
    req->notices = true;
    int rc;
    if (!json_is_object(root))
        rc = fail(err, CONTROL_BAD_REQUEST, "not a JSON object");
    else
        rc = parse_op(root, req, err) < 0 || parse_fields(root, req, err) < 0 ||
                     check_complete(req, err) < 0
                 ? -1
                 : 0;
    json_decref(root);
    return rc;
}

json_t *control_request_json(const struct control_request *req)
{
    json_t *o = json_pack("{s:i, s:s}", "version", CONTROL_VERSION, "request", op_names[req->op]);
    if (req->op == CONTROL_STATUS && req->all)
        json_object_set_new(o, "all", json_true());
    if (req->has_user)
        json_object_set_new(o, "user", req->by_uid ? json_integer((json_int_t)req->uid)
                                                   : json_string(req->name));
    if (req->remove)
        json_object_set_new(o, "remove", json_true());
    if (req->duration)
        json_object_set_new(o, "for", json_integer((json_int_t)req->duration));
    if (req->reason[0])
        json_object_set_new(o, "reason", json_string(req->reason));
    if (req->op == CONTROL_WHY)
        json_object_set_new(o, "pid", json_integer(req->pid));
    if (req->op == CONTROL_SESSION)
        json_object_set_new(o, "notices", json_boolean(req->notices));
    if (req->op == CONTROL_ACCOUNT)
        json_object_set_new(o, "deny_level", json_integer(req->deny_level));
    return o;
}

json_t *control_reply_ok(void)
{
    return json_pack("{s:i, s:b}", "version", CONTROL_VERSION, "ok", 1);
}

json_t *control_reply_error(enum control_code code, const char *message)
{
    return json_pack("{s:i, s:b, s:{s:s, s:s}}", "version", CONTROL_VERSION, "ok", 0, "error",
                     "code", code_names[code], "message", message);
}

char *control_line(json_t *reply)
{
    char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
    json_decref(reply);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *line = xmalloc(n + 2);
    memcpy(line, text, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    free(text);
    return line;
}

static enum control_code code_from_name(const char *name)
{
    for (size_t i = 0; i < COUNT(code_names); i++)
        if (strcmp(name, code_names[i]) == 0)
            return (enum control_code)i;
    return CONTROL_FAILED;
}

json_t *control_parse_reply(const char *line, size_t len, struct control_error *err)
{
    memset(err, 0, sizeof(*err));
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *ok = root ? json_object_get(root, "ok") : NULL;
    const json_t *version = root ? json_object_get(root, "version") : NULL;
    if (!json_is_object(root) || !json_is_boolean(ok) || !json_is_integer(version)) {
        json_decref(root);
        fail(err, CONTROL_BAD_REQUEST, "the daemon's reply is not a reply of this protocol");
        return NULL;
    }
    if (json_integer_value(version) != CONTROL_VERSION) {
        json_decref(root);
        fail(err, CONTROL_BAD_VERSION, "the daemon speaks protocol version %lld, this tool %d",
             (long long)json_integer_value(version), CONTROL_VERSION);
        return NULL;
    }
    if (json_is_false(ok)) {
        const json_t *e = json_object_get(root, "error");
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *message = json_string_value(json_object_get(e, "message"));
        err->code = code ? code_from_name(code) : CONTROL_FAILED;
        copy_string(err->message, sizeof(err->message), message ? message : "(no message)");
    }
    return root;
}
