/* The control protocol between loginguardd and loginguardctl: one JSON
 * object a line each way over a Unix stream socket (loginguard-control(7)).
 *
 * A request:
 *   {"version": 1, "request": "status", "all": false}
 *   {"version": 1, "request": "user", "user": "alice"}   (or a uid; none = the asker)
 *   {"version": 1, "request": "forgive", "user": "alice", "reason": "..."}
 *   {"version": 1, "request": "exempt", "user": "alice", "for": 14400, "reason": "..."}
 *   {"version": 1, "request": "exempt", "user": "alice", "remove": true}
 *   {"version": 1, "request": "reload"}
 *   {"version": 1, "request": "why", "pid": 4242}
 *   {"version": 1, "request": "metrics"}   (the reply's "metrics": Prometheus text)
 *   {"version": 1, "request": "session", "user": 1234, "notices": true}
 *   {"version": 1, "request": "account", "user": 1234, "deny_level": 3}
 *     (pam_loginguard: a new session, placed in its user's cgroup, and
 *     what to show; whether a login is refused)
 * A reply: {"version": 1, "ok": true, ...} or
 *          {"version": 1, "ok": false, "error": {"code": "...", "message": "..."}}
 *
 * Parsing is pure (no I/O), so the daemon, the tool, the unit tests and a
 * fuzz target share it.  What a request may do is never decided from what
 * it says: the daemon looks at the peer's credentials. */
#ifndef LOGINGUARD_CONTROL_PROTO_H
#define LOGINGUARD_CONTROL_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROL_VERSION 1
/* A request line, newline included; a longer one is refused and the
 * connection closed. */
#define CONTROL_LINE_MAX 8192
#define CONTROL_NAME_MAX 64      /* a user name, bytes */
#define CONTROL_REASON_MAX 512   /* a reason, bytes */
/* The kernel's largest pid_max (PID_MAX_LIMIT on 64-bit). */
#define CONTROL_PID_MAX 4194304
/* The highest level a ladder has (state.json's limit too). */
#define CONTROL_LEVEL_MAX 64
/* Exemptions last at most this long: a forgotten one ends by itself. */
#define CONTROL_EXEMPT_MAX_SEC (366ULL * 86400)

enum control_op {
    CONTROL_STATUS, CONTROL_USER, CONTROL_FORGIVE, CONTROL_EXEMPT, CONTROL_RELOAD, CONTROL_WHY,
    CONTROL_METRICS, CONTROL_SESSION, CONTROL_ACCOUNT
};

/* Error codes, as sent (control_code_name). */
enum control_code {
    CONTROL_BAD_REQUEST,   /* not JSON, not an object, a field of the wrong type or range */
    CONTROL_BAD_VERSION,   /* a protocol version this daemon does not speak */
    CONTROL_TOO_LONG,      /* a line longer than CONTROL_LINE_MAX */
    CONTROL_REFUSED,       /* the peer may not do this */
    CONTROL_NO_SUCH_USER,
    CONTROL_FAILED,        /* the daemon could not do it (the state could not be saved) */
    CONTROL_INVALID_CONFIG, /* reload: the config has errors (the reply's "errors") */
};

struct control_error {
    enum control_code code;
    char message[256];
};

struct control_request {
    enum control_op op;
    bool all;                       /* status: idle users too */
    bool has_user;                  /* false: the asker */
    bool by_uid;                    /* user given as a number */
    uid_t uid;
    char name[CONTROL_NAME_MAX + 1];
    bool remove;                    /* exempt: end it now */
    uint64_t duration;              /* exempt: seconds */
    char reason[CONTROL_REASON_MAX + 1];
    pid_t pid;                      /* why: the process */
    bool notices;                   /* session: show and mark read the unread notices */
    int deny_level;                 /* account: refuse at this level and above; 0 never */
};

const char *control_op_name(enum control_op op);
const char *control_code_name(enum control_code code);

/* One request line (without its newline) into req; -1 with err set. */
int control_parse_request(const char *line, size_t len, struct control_request *req,
                          struct control_error *err);
/* The request as a JSON object (the tool sends it). */
json_t *control_request_json(const struct control_request *req);

/* {"version": 1, "ok": true}; the caller adds the rest. */
json_t *control_reply_ok(void);
json_t *control_reply_error(enum control_code code, const char *message);
/* The reply as one line, newline included (to be freed); NULL if jansson
 * ran out of memory.  Takes the reference. */
char *control_line(json_t *reply);

/* A reply line read by the tool: the object (to be decref'd), or NULL
 * with err set (BAD_REQUEST for a reply that is not one).  A reply with
 * "ok": false is returned too, its error copied into err. */
json_t *control_parse_reply(const char *line, size_t len, struct control_error *err);

/* Whether a user name given in a request may be looked up: at most
 * CONTROL_NAME_MAX bytes, none of them a control character, a space, ':'
 * or '/', and not starting with '-'.  Anything else is no user's name. */
bool control_name_ok(const char *name, size_t len);

#endif
