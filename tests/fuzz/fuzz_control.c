/* A request line on the control socket, which anyone on the node may
 * write: it parses or is an error with a message, and one that parses is
 * what the tool would send for it, read back the same. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "control_proto.h"
#include "fuzz.h"

static bool same_request(const struct control_request *a, const struct control_request *b)
{
    return a->op == b->op && a->all == b->all && a->has_user == b->has_user &&
           a->by_uid == b->by_uid && a->uid == b->uid && strcmp(a->name, b->name) == 0 &&
           a->remove == b->remove && a->duration == b->duration &&
           strcmp(a->reason, b->reason) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct control_request req, again;
    struct control_error err;
    if (control_parse_request((const char *)data, size, &req, &err) < 0) {
        FUZZ_CHECK(err.message[0] != '\0');
        /* The error itself is a reply the tool reads. */
        char *line = control_line(control_reply_error(err.code, err.message));
        FUZZ_CHECK(line != NULL);
        struct control_error back;
        json_t *r = control_parse_reply(line, strlen(line), &back);
        FUZZ_CHECK(r && back.code == err.code && strcmp(back.message, err.message) == 0);
        json_decref(r);
        free(line);
        return 0;
    }
    FUZZ_CHECK(size < CONTROL_LINE_MAX);
    FUZZ_CHECK(!req.has_user || req.by_uid || control_name_ok(req.name, strlen(req.name)));
    FUZZ_CHECK(req.op != CONTROL_EXEMPT || req.remove || (req.duration && req.reason[0]));
    char *line = control_line(control_request_json(&req));
    FUZZ_CHECK(line != NULL);
    FUZZ_CHECK(control_parse_request(line, strlen(line) - 1, &again, &err) == 0);
    FUZZ_CHECK(same_request(&req, &again));
    free(line);
    return 0;
}
