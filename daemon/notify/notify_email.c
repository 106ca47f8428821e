#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child.h"
#include "base64.h"
#include "cairo_lib.h"
#include "notify/notify_email.h"
#include "strbuf.h"
#include "usage_chart.h"
#include "util.h"

#define SUBJECT_MAX 200     /* bytes, before encoding */
#define HEADER_VALUE_MAX 900 /* From, To: under RFC 5322's 998 a line */
#define ENCODED_CHUNK 42    /* bytes per encoded word: 56 base64 characters, 77 a line */
#define MAX_ARGS 32

static bool is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* A header value on one line: control bytes become spaces, cut to max
 * bytes without splitting a UTF-8 sequence. */
static char *header_value(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    char *v = xstrndup(s, n);
    for (char *p = v; *p; p++)
        if (is_control((unsigned char)*p))
            *p = ' ';
    return v;
}

static bool is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

/* Plain ASCII: folded at spaces so that no line passes 78 characters
 * where a space allows it. */
static void subject_ascii(FILE *out, const char *s)
{
    size_t column = strlen("Subject: ");
    while (*s) {
        size_t word = strcspn(s + 1, " ") + 1;
        if (*s == ' ' && column + word > 78 && column > strlen("Subject: ")) {
            fputc('\n', out);
            column = 0;
        }
        fwrite(s, 1, word, out);
        column += word;
        s += word;
    }
}

/* Not ASCII: RFC 2047 encoded words, one a line, each whole UTF-8
 * sequences only. */
static void subject_encoded(FILE *out, const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = len - i < ENCODED_CHUNK ? len - i : ENCODED_CHUNK;
        while (i + n < len && n > 1 && ((unsigned char)s[i + n] & 0xc0) == 0x80)
            n--;
        fputs(i ? "\n =?UTF-8?B?" : "=?UTF-8?B?", out);
        struct strbuf word = {0};
        base64_encode(&word, (const unsigned char *)s + i, n, 0);
        if (word.len)
            fwrite(word.s, 1, word.len, out);
        strbuf_free(&word);
        fputs("?=", out);
        i += n;
    }
}

/* RFC 5322's date, in English whatever the locale. */
static void date_header(FILE *out, time_t date)
{
    static const char *days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    localtime_r(&date, &tm);
    long off = tm.tm_gmtoff / 60;
    fprintf(out, "Date: %s, %02d %s %04d %02d:%02d:%02d %c%02ld%02ld\n", days[tm.tm_wday],
            tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
            off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
}

static void body_text(FILE *out, const char *s)
{
    bool line_start = true;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\r' && s[1] == '\n')
            continue;
        if (c == '\r')
            c = '\n';
        if (is_control(c) && c != '\n' && c != '\t')
            continue;
        fputc(c, out);
        if (line_start && c == '.' && (s[1] == '\n' || s[1] == '\r' || s[1] == '\0'))
            fputc(' ', out);
        line_start = c == '\n';
    }
    if (!line_start)
        fputc('\n', out);
}

/* From, To, Subject, Date, Auto-Submitted and MIME-Version. */
static void head(FILE *out, const char *from, const char *to, const char *subject, time_t date)
{
    char *from_v = header_value(from, HEADER_VALUE_MAX);
    char *to_v = header_value(to, HEADER_VALUE_MAX);
    char *subject_v = header_value(subject, SUBJECT_MAX);
    fprintf(out, "From: %s\nTo: %s\nSubject: ", from_v, to_v);
    if (is_ascii(subject_v))
        subject_ascii(out, subject_v);
    else
        subject_encoded(out, subject_v);
    fputc('\n', out);
    date_header(out, date);
    fputs("Auto-Submitted: auto-generated\n"
          "MIME-Version: 1.0\n",
          out);
    free(from_v);
    free(to_v);
    free(subject_v);
}

static const char text_part[] = "Content-Type: text/plain; charset=utf-8\n"
                                "Content-Transfer-Encoding: 8bit\n"
                                "\n";

char *email_compose(const char *from, const char *to, const char *subject, const char *body,
                    time_t date)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        abort(); /* out of memory, as in util.c */
    head(out, from, to, subject, date);
    fputs(text_part, out);
    body_text(out, body);
    if (fclose(out) != 0)
        abort();
    return text;
}

char *email_compose_image(const char *from, const char *to, const char *subject,
                          const char *body, const unsigned char *png, size_t png_len,
                          time_t date)
{
    /* The body is the user's process names and more: the boundary must
     * be one it does not hold. */
    char boundary[64];
    for (unsigned n = 0;; n++) {
        snprintf(boundary, sizeof(boundary), "=_loginguard_%lx_%x_%u", (unsigned long)date,
                 (unsigned)getpid(), n);
        if (!strstr(body, boundary))
            break;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        abort();
    head(out, from, to, subject, date);
    fprintf(out, "Content-Type: multipart/mixed; boundary=\"%s\"\n\n"
            "This is a message in MIME format: the notice, then a chart of your usage.\n"
            "\n--%s\n%s", boundary, boundary, text_part);
    body_text(out, body);
    /* The line end before a boundary is the boundary's: the text part
     * keeps its own last one. */
    fprintf(out, "\n--%s\n"
            "Content-Type: image/png; name=\"usage.png\"\n"
            "Content-Transfer-Encoding: base64\n"
            "Content-Disposition: inline; filename=\"usage.png\"\n"
            "\n", boundary);
    struct strbuf b64 = {0};
    base64_encode(&b64, png, png_len, 76);
    if (b64.len)
        fwrite(b64.s, 1, b64.len, out);
    strbuf_free(&b64);
    fprintf(out, "--%s--\n", boundary);
    if (fclose(out) != 0)
        abort();
    return text;
}

char *email_address(const char *user, const char *domain)
{
    if (domain && *domain)
        return xasprintf("%s@%s", user, domain);
    return xstrdup(user);
}

struct sendmail_run {
    char *argv[MAX_ARGS + 1];
};

static int exec_sendmail(void *arg)
{
    struct sendmail_run *run = arg;
    char *env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(run->argv[0], run->argv, env);
    return 127;
}

/* Split on spaces and tabs into run->argv (pointing into copy). */
static int split_command(char *copy, struct sendmail_run *run)
{
    size_t n = 0;
    for (char *save = NULL, *word = strtok_r(copy, " \t", &save); word;
         word = strtok_r(NULL, " \t", &save)) {
        if (n == MAX_ARGS)
            return -1;
        run->argv[n++] = word;
    }
    run->argv[n] = NULL;
    return n ? 0 : -1;
}

/* The command split into run->argv (pointing into copy): 0, or -1 with
 * err. */
static int check_command(const char *sendmail_command, char *copy, struct sendmail_run *run,
                         char *err, size_t err_len)
{
    if (split_command(copy, run) < 0) {
        snprintf(err, err_len, "the sendmail command '%s' is empty or has more than %d words",
                 sendmail_command, MAX_ARGS);
        return -1;
    }
    if (run->argv[0][0] != '/' || access(run->argv[0], X_OK) != 0) {
        snprintf(err, err_len, "the sendmail command '%s' is not an executable given by its full "
                 "path (%s); install a mail transfer agent or set the command to one",
                 run->argv[0], run->argv[0][0] != '/' ? "not absolute" : strerror(errno));
        return -1;
    }
    return 0;
}

static enum notify_outcome start(struct email_send *s, const char *program, child_fn *fn,
                                 void *arg, const char *input, uint64_t timeout_usec, char *err,
                                 size_t err_len)
{
    s->program = xstrdup(program);
    s->timeout_usec = timeout_usec;
    if (child_start(&s->child, fn, arg, input, input ? strlen(input) : 0, timeout_usec) == 0)
        return NOTIFY_PENDING;
    snprintf(err, err_len, "could not start '%s': %s", s->program, strerror(errno));
    notify_email_free(s);
    return NOTIFY_FAILED;
}

enum notify_outcome notify_email_start(struct email_send *s, const char *sendmail_command,
                                       const char *from, const char *to, const char *subject,
                                       const char *body, uint64_t timeout_usec, char *err,
                                       size_t err_len)
{
    memset(s, 0, sizeof(*s));
    char *copy = xstrdup(sendmail_command);
    struct sendmail_run run;
    enum notify_outcome outcome = NOTIFY_FAILED;
    if (check_command(sendmail_command, copy, &run, err, err_len) == 0) {
        char *message = email_compose(from, to, subject, body, time(NULL));
        outcome = start(s, run.argv[0], exec_sendmail, &run, message, timeout_usec, err,
                        err_len);
        free(message);
    }
    free(copy);
    return outcome;
}

struct chart_mail {
    struct sendmail_run run;
    const char *from, *to, *subject, *body;
    const struct email_chart *chart;
};

/* The chart as a PNG: 0, or -1 with why. */
static int draw_chart(const struct email_chart *c, struct strbuf *png, char *why, size_t len)
{
    struct cairo_lib lib;
    if (cairo_lib_load(&lib, why, len) < 0)
        return -1;
    struct usage_chart u = {
        .title = c->title, .from = c->from, .until = c->until, .points = c->points,
        .point_count = c->count, .lines = true, .cpu_threshold = c->cpu_threshold,
    };
    return usage_chart_png(&lib, &u, png, why, len);
}

/* In the child: draw, compose, and run sendmail with the message as its
 * standard input (a memory file, read from its start). */
static int send_with_chart(void *arg)
{
    struct chart_mail *m = arg;
    struct strbuf png = {0};
    char why[512];
    char *message;
    if (draw_chart(m->chart, &png, why, sizeof(why)) == 0) {
        message = email_compose_image(m->from, m->to, m->subject, m->body,
                                      (const unsigned char *)png.s, png.len, time(NULL));
    } else {
        fprintf(stderr, "loginguardd: a mailed notice goes without its chart: %s\n", why);
        message = email_compose(m->from, m->to, m->subject, m->body, time(NULL));
    }
    int fd = memfd_create("loginguard-mail", MFD_CLOEXEC);
    size_t len = strlen(message), done = 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, message + done, len - done);
        if (w <= 0)
            return 126;
        done += (size_t)w;
    }
    if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, STDIN_FILENO) < 0)
        return 126;
    return exec_sendmail(&m->run);
}

enum notify_outcome notify_email_start_chart(struct email_send *s, const char *sendmail_command,
                                             const char *from, const char *to,
                                             const char *subject, const char *body,
                                             const struct email_chart *chart,
                                             uint64_t timeout_usec, char *err, size_t err_len)
{
    memset(s, 0, sizeof(*s));
    char *copy = xstrdup(sendmail_command);
    struct chart_mail m = {.from = from, .to = to, .subject = subject, .body = body,
                           .chart = chart};
    enum notify_outcome outcome = NOTIFY_FAILED;
    if (check_command(sendmail_command, copy, &m.run, err, err_len) == 0)
        outcome = start(s, m.run.argv[0], send_with_chart, &m, NULL, timeout_usec, err,
                        err_len);
    free(copy);
    return outcome;
}

enum notify_outcome notify_email_finish(struct email_send *s, enum child_result result,
                                        int status, char *err, size_t err_len)
{
    enum notify_outcome outcome = NOTIFY_FAILED;
    if (result == CHILD_TIMED_OUT) {
        snprintf(err, err_len, "'%s' did not finish within %llu ms and was killed; is the mail "
                 "system up?", s->program, (unsigned long long)(s->timeout_usec / 1000));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        outcome = NOTIFY_SENT;
    } else {
        char how[64];
        child_describe_status(status, how, sizeof(how));
        snprintf(err, err_len, "'%s' %s; the mail was not sent (see the mail system's log)",
                 s->program, how);
    }
    notify_email_free(s);
    return outcome;
}

void notify_email_free(struct email_send *s)
{
    free(s->program);
    s->program = NULL;
}

enum notify_outcome notify_email(const char *sendmail_command, const char *from, const char *to,
                                 const char *subject, const char *body, uint64_t timeout_usec,
                                 char *err, size_t err_len)
{
    struct email_send s;
    enum notify_outcome o = notify_email_start(&s, sendmail_command, from, to, subject, body,
                                               timeout_usec, err, err_len);
    if (o != NOTIFY_PENDING)
        return o;
    int status = 0;
    enum child_result result = child_wait(&s.child, &status);
    return notify_email_finish(&s, result, status, err, err_len);
}
