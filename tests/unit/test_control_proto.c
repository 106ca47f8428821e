/* The control protocol (control_proto.c): what loginguardctl sends, what
 * the daemon accepts, and the errors it answers with. */
#include "config.h"

#include "control_proto.h"
#include "testutil.h"
#include "util.h"

static int parse(const char *line, struct control_request *req, struct control_error *err)
{
    return control_parse_request(line, strlen(line), req, err);
}

/* The line is refused with code, and the message says msg_part. */
static void refused(const char *line, enum control_code code, const char *msg_part)
{
    struct control_request req;
    struct control_error err;
    assert_int_equal(parse(line, &req, &err), -1);
    if (err.code != code || !strstr(err.message, msg_part))
        fail_msg("%s: got %s \"%s\", wanted %s \"...%s...\"", line, control_code_name(err.code),
                 err.message, control_code_name(code), msg_part);
}

static void test_each_request_parses(void **state)
{
    (void)state;
    struct control_request r;
    struct control_error e;
    assert_int_equal(parse("{\"version\":1,\"request\":\"status\",\"all\":true}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_STATUS);
    assert_true(r.all);
    assert_int_equal(parse("{\"version\":1,\"request\":\"user\"}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_USER);
    assert_false(r.has_user); /* "me" */
    assert_int_equal(parse("{\"version\":1,\"request\":\"user\",\"user\":1234}", &r, &e), 0);
    assert_true(r.has_user && r.by_uid);
    assert_int_equal(r.uid, 1234);
    assert_int_equal(
        parse("{\"request\":\"forgive\",\"user\":\"alice\",\"reason\":\"r\xc3\xa9sum\xc3\xa9\","
              "\"version\":1}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_FORGIVE);
    assert_string_equal(r.name, "alice");
    assert_false(r.by_uid);
    assert_string_equal(r.reason, "r\xc3\xa9sum\xc3\xa9");
    assert_int_equal(parse("{\"version\":1,\"request\":\"exempt\",\"user\":\"bob\",\"for\":14400,"
                           "\"reason\":\"workshop\"}", &r, &e), 0);
    assert_int_equal(r.duration, 14400);
    assert_false(r.remove);
    assert_int_equal(
        parse("{\"version\":1,\"request\":\"exempt\",\"user\":\"bob\",\"remove\":true}", &r, &e), 0);
    assert_true(r.remove);
    assert_int_equal(parse("{\"version\":1,\"request\":\"reload\"}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_RELOAD);
}

static void test_what_the_tool_sends_the_daemon_reads(void **state)
{
    (void)state;
    struct control_request in = {.op = CONTROL_EXEMPT, .has_user = true, .duration = 3,
                                 .name = "lgtest1", .reason = "a \"quoted\" reason"};
    char *line = control_line(control_request_json(&in));
    assert_non_null(line);
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1); /* one line */
    struct control_request out;
    struct control_error e;
    assert_int_equal(control_parse_request(line, strlen(line) - 1, &out, &e), 0);
    assert_int_equal(out.op, CONTROL_EXEMPT);
    assert_string_equal(out.name, "lgtest1");
    assert_string_equal(out.reason, in.reason);
    assert_int_equal(out.duration, 3);
    free(line);
}

static void test_malformed_requests_are_errors_that_say_why(void **state)
{
    (void)state;
    refused("", CONTROL_BAD_REQUEST, "not JSON");
    refused("{\"version\":1,\"request\":\"status\"", CONTROL_BAD_REQUEST, "not JSON");
    refused("[1,2]", CONTROL_BAD_REQUEST, "not a JSON object");
    refused("{\"request\":\"status\"}", CONTROL_BAD_REQUEST, "\"version\" is missing");
    refused("{\"version\":2,\"request\":\"status\"}", CONTROL_BAD_VERSION, "version 1");
    refused("{\"version\":\"1\",\"request\":\"status\"}", CONTROL_BAD_VERSION, "version 1");
    refused("{\"version\":1}", CONTROL_BAD_REQUEST, "\"request\" is missing");
    refused("{\"version\":1,\"request\":\"shutdown\"}", CONTROL_BAD_REQUEST, "unknown request");
    refused("{\"version\":1,\"request\":\"status\",\"request\":\"user\"}", CONTROL_BAD_REQUEST,
            "not JSON");
    refused("{\"version\":1,\"request\":\"status\",\"user\":\"x\"}", CONTROL_BAD_REQUEST,
            "takes no field \"user\"");
    refused("{\"version\":1,\"request\":\"forgive\"}", CONTROL_BAD_REQUEST, "needs \"user\"");
    refused("{\"version\":1,\"request\":\"reload\",\"user\":\"x\"}", CONTROL_BAD_REQUEST,
            "\"reload\" takes no field \"user\"");
    refused("{\"version\":1,\"request\":\"user\",\"user\":-1}", CONTROL_BAD_REQUEST, "uid");
    refused("{\"version\":1,\"request\":\"user\",\"user\":4294967295}", CONTROL_BAD_REQUEST, "uid");
    refused("{\"version\":1,\"request\":\"user\",\"user\":true}", CONTROL_BAD_REQUEST, "name or");
    refused("{\"version\":1,\"request\":\"status\",\"all\":1}", CONTROL_BAD_REQUEST, "true or false");
}

static void test_metrics_takes_nothing_but_its_name(void **state)
{
    (void)state;
    struct control_request r;
    struct control_error e;
    assert_int_equal(parse("{\"version\":1,\"request\":\"metrics\"}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_METRICS);
    assert_string_equal(control_op_name(r.op), "metrics");
    refused("{\"version\":1,\"request\":\"metrics\",\"user\":\"x\"}", CONTROL_BAD_REQUEST,
            "\"metrics\" takes no field \"user\"");
    refused("{\"version\":1,\"request\":\"metrics\",\"all\":true}", CONTROL_BAD_REQUEST,
            "takes no field \"all\"");
    /* What the tool sends reads back as the same request. */
    struct control_request in = {.op = CONTROL_METRICS};
    char *line = control_line(control_request_json(&in));
    assert_string_equal(line, "{\"version\":1,\"request\":\"metrics\"}\n");
    free(line);
}

static void test_exempt_needs_a_duration_or_remove_and_a_reason(void **state)
{
    (void)state;
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"reason\":\"r\"}",
            CONTROL_BAD_REQUEST, "needs \"for\"");
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"for\":60}", CONTROL_BAD_REQUEST,
            "needs a \"reason\"");
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"for\":60,\"remove\":true,"
            "\"reason\":\"r\"}", CONTROL_BAD_REQUEST, "not both");
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"for\":0,\"reason\":\"r\"}",
            CONTROL_BAD_REQUEST, "seconds from 1");
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"for\":31622401,"
            "\"reason\":\"r\"}", CONTROL_BAD_REQUEST, "seconds from 1");
    refused("{\"version\":1,\"request\":\"exempt\",\"user\":\"a\",\"for\":1.5,\"reason\":\"r\"}",
            CONTROL_BAD_REQUEST, "seconds from 1");
}

static void test_hostile_names_and_reasons_are_refused(void **state)
{
    (void)state;
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"a b\"}", CONTROL_NO_SUCH_USER, "no user");
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"../x\"}", CONTROL_NO_SUCH_USER, "no user");
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"-x\"}", CONTROL_NO_SUCH_USER, "no user");
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"\"}", CONTROL_NO_SUCH_USER, "no user");
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"a\\u001b[2J\"}", CONTROL_NO_SUCH_USER,
            "no user");
    refused("{\"version\":1,\"request\":\"user\",\"user\":\"a\\u0000b\"}", CONTROL_BAD_REQUEST,
            "not JSON");
    char line[300];
    snprintf(line, sizeof(line), "{\"version\":1,\"request\":\"user\",\"user\":\"%065d\"}", 0);
    refused(line, CONTROL_NO_SUCH_USER, "no user");
    snprintf(line, sizeof(line), "{\"version\":1,\"request\":\"user\",\"user\":\"%064d\"}", 0);
    struct control_request r;
    struct control_error e;
    assert_int_equal(parse(line, &r, &e), 0);
    refused("{\"version\":1,\"request\":\"forgive\",\"user\":\"a\",\"reason\":\"x\\ny\"}",
            CONTROL_BAD_REQUEST, "control characters");
    refused("{\"version\":1,\"request\":\"forgive\",\"user\":\"a\",\"reason\":\"\xff\"}",
            CONTROL_BAD_REQUEST, "not JSON"); /* not UTF-8 */
    char *long_reason = xasprintf("{\"version\":1,\"request\":\"forgive\",\"user\":\"a\","
                                  "\"reason\":\"%0*d\"}", CONTROL_REASON_MAX + 1, 0);
    refused(long_reason, CONTROL_BAD_REQUEST, "at most");
    free(long_reason);
}

/* why takes a pid and nothing else: whose process it is, the daemon
 * finds out itself. */
static void test_why_takes_only_a_pid(void **state)
{
    (void)state;
    struct control_request r;
    struct control_error e;
    assert_int_equal(parse("{\"version\":1,\"request\":\"why\",\"pid\":4242}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_WHY);
    assert_int_equal(r.pid, 4242);
    refused("{\"version\":1,\"request\":\"why\"}", CONTROL_BAD_REQUEST, "needs \"pid\"");
    refused("{\"version\":1,\"request\":\"why\",\"pid\":0}", CONTROL_BAD_REQUEST, "\"pid\"");
    refused("{\"version\":1,\"request\":\"why\",\"pid\":-5}", CONTROL_BAD_REQUEST, "\"pid\"");
    refused("{\"version\":1,\"request\":\"why\",\"pid\":4194305}", CONTROL_BAD_REQUEST,
            "\"pid\"");
    refused("{\"version\":1,\"request\":\"why\",\"pid\":\"7\"}", CONTROL_BAD_REQUEST,
            "\"pid\"");
    refused("{\"version\":1,\"request\":\"why\",\"pid\":7,\"user\":\"root\"}",
            CONTROL_BAD_REQUEST, "takes no field \"user\"");
    refused("{\"version\":1,\"request\":\"user\",\"pid\":7}", CONTROL_BAD_REQUEST,
            "takes no field \"pid\"");
    struct control_request in = {.op = CONTROL_WHY, .pid = 77};
    char *line = control_line(control_request_json(&in));
    assert_int_equal(control_parse_request(line, strlen(line) - 1, &r, &e), 0);
    assert_int_equal(r.pid, 77);
    free(line);
}

/* pam_loginguard's requests: always about one user; a session shows
 * the notices unless told not to (PAM_SILENT). */
static void test_session_and_account_requests(void **state)
{
    (void)state;
    struct control_request r;
    struct control_error e;
    assert_int_equal(parse("{\"version\":1,\"request\":\"session\",\"user\":2000}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_SESSION);
    assert_int_equal(r.uid, 2000);
    assert_true(r.notices);
    assert_int_equal(parse("{\"version\":1,\"request\":\"session\",\"user\":2000,"
                           "\"notices\":false}", &r, &e), 0);
    assert_false(r.notices);
    assert_int_equal(parse("{\"version\":1,\"request\":\"account\",\"user\":2000,"
                           "\"deny_level\":3}", &r, &e), 0);
    assert_int_equal(r.op, CONTROL_ACCOUNT);
    assert_int_equal(r.deny_level, 3);
    refused("{\"version\":1,\"request\":\"session\"}", CONTROL_BAD_REQUEST, "needs \"user\"");
    refused("{\"version\":1,\"request\":\"account\",\"deny_level\":1}", CONTROL_BAD_REQUEST,
            "needs \"user\"");
    refused("{\"version\":1,\"request\":\"account\",\"user\":1,\"deny_level\":65}",
            CONTROL_BAD_REQUEST, "\"deny_level\" is not a number from 0 to 64");
    refused("{\"version\":1,\"request\":\"session\",\"user\":1,\"notices\":1}",
            CONTROL_BAD_REQUEST, "\"notices\" is not true or false");
    refused("{\"version\":1,\"request\":\"session\",\"user\":1,\"deny_level\":1}",
            CONTROL_BAD_REQUEST, "takes no field \"deny_level\"");
    struct control_request in = {.op = CONTROL_ACCOUNT, .has_user = true, .by_uid = true,
                                 .uid = 7, .deny_level = 2};
    char *line = control_line(control_request_json(&in));
    assert_int_equal(control_parse_request(line, strlen(line) - 1, &r, &e), 0);
    assert_int_equal(r.deny_level, 2);
    assert_int_equal(r.uid, 7);
    free(line);
}

static void test_a_line_too_long_is_refused_before_parsing(void **state)
{
    (void)state;
    char *line = xmalloc(CONTROL_LINE_MAX);
    memset(line, ' ', CONTROL_LINE_MAX);
    struct control_request r;
    struct control_error e;
    assert_int_equal(control_parse_request(line, CONTROL_LINE_MAX, &r, &e), -1);
    assert_int_equal(e.code, CONTROL_TOO_LONG);
    free(line);
}

static void test_replies_round_trip(void **state)
{
    (void)state;
    struct control_error e;
    char *line = control_line(control_reply_error(CONTROL_REFUSED, "root or wheel needed"));
    json_t *r = control_parse_reply(line, strlen(line), &e);
    assert_non_null(r);
    assert_int_equal(e.code, CONTROL_REFUSED);
    assert_string_equal(e.message, "root or wheel needed");
    json_decref(r);
    free(line);

    json_t *ok = control_reply_ok();
    json_object_set_new(ok, "mode", json_string("observe"));
    line = control_line(ok);
    r = control_parse_reply(line, strlen(line), &e);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "ok")));
    assert_string_equal(json_string_value(json_object_get(r, "mode")), "observe");
    json_decref(r);
    free(line);

    assert_null(control_parse_reply("hello", 5, &e));
    assert_int_equal(e.code, CONTROL_BAD_REQUEST);
    const char *v2 = "{\"version\":2,\"ok\":true}";
    assert_null(control_parse_reply(v2, strlen(v2), &e));
    assert_int_equal(e.code, CONTROL_BAD_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_request_parses),
        cmocka_unit_test(test_what_the_tool_sends_the_daemon_reads),
        cmocka_unit_test(test_malformed_requests_are_errors_that_say_why),
        cmocka_unit_test(test_exempt_needs_a_duration_or_remove_and_a_reason),
        cmocka_unit_test(test_metrics_takes_nothing_but_its_name),
        cmocka_unit_test(test_hostile_names_and_reasons_are_refused),
        cmocka_unit_test(test_why_takes_only_a_pid),
        cmocka_unit_test(test_session_and_account_requests),
        cmocka_unit_test(test_a_line_too_long_is_refused_before_parsing),
        cmocka_unit_test(test_replies_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
