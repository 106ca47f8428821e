/* The email channel: a message handed to the site's sendmail command.
 * Subject and body carry process names, which their owner chose: nothing
 * in them may become a header (a name with "\nBcc: someone" must not send
 * a copy anywhere). */
#ifndef LOGINGUARD_NOTIFY_EMAIL_H
#define LOGINGUARD_NOTIFY_EMAIL_H

#include <stdint.h>
#include <time.h>

#include "base/child.h"
#include "record/notify_outcome.h"
#include "report.h"

/* A mail under way. */
struct email_send {
    struct child child;
    char *program;
    uint64_t timeout_usec;
};

/* Start the sendmail command (argv split on spaces, e.g.
 * "/usr/sbin/sendmail -i -t"; no shell; the program must be an absolute
 * path) as a child with the message from email_compose() on stdin.
 * NOTIFY_PENDING: under way in s->child, killed at timeout_usec; once
 * child_check() says it has ended, notify_email_finish() tells the
 * outcome: an exit status other than 0 is a failure whose err names the
 * command.  Otherwise NOTIFY_FAILED with err. */
enum notify_outcome notify_email_start(struct email_send *s, const char *sendmail_command,
                                       const char *from, const char *to, const char *subject,
                                       const char *body, uint64_t timeout_usec, char *err,
                                       size_t err_len);
/* The chart a mail may carry ([notify] email_chart): the user's usage
 * over the last hour, as usage_chart.h draws it. */
struct email_chart {
    const char *title;
    const struct report_point *points;   /* oldest first */
    size_t count;
    uint64_t from, until;                /* realtime usec */
    double cpu_threshold;                /* [violation] cpu */
};

/* notify_email_start, the message carrying chart: the child draws it
 * (it loads cairo there; the daemon never does) and hands sendmail
 * email_compose_image()'s message; a chart it cannot draw leaves the
 * mail as email_compose() makes it, and says why on stderr. */
enum notify_outcome notify_email_start_chart(struct email_send *s, const char *sendmail_command,
                                             const char *from, const char *to,
                                             const char *subject, const char *body,
                                             const struct email_chart *chart,
                                             uint64_t timeout_usec, char *err, size_t err_len);

/* The outcome of a child that has ended; frees s. */
enum notify_outcome notify_email_finish(struct email_send *s, enum child_result result,
                                        int status, char *err, size_t err_len);
void notify_email_free(struct email_send *s);

/* Start and wait: the whole send, for tools and tests. */
enum notify_outcome notify_email(const char *sendmail_command, const char *from, const char *to,
                                 const char *subject, const char *body, uint64_t timeout_usec,
                                 char *err, size_t err_len);

/* The address: "<user>@<domain>" when domain is set (non-empty), else the
 * bare user name (local delivery). */
char *email_address(const char *user, const char *domain);

/* The whole message, as notify_email() sends it: From, To, Subject, Date,
 * Auto-Submitted: auto-generated, MIME headers for UTF-8 text, a blank
 * line and the body.  In header values every control byte (CR and LF
 * among them) becomes a space; the subject is cut to 200 bytes and folded,
 * as RFC 2047 encoded words when it is not plain ASCII.  In the body,
 * control bytes other than newline and tab are dropped and a line of a
 * lone "." gets a space (it would end the message for a sendmail run
 * without -i).  Lines end in "\n"; sendmail makes them CRLF. */
char *email_compose(const char *from, const char *to, const char *subject, const char *body,
                    time_t date);

/* The same message as multipart/mixed: first the text, as a part whose
 * content is email_compose()'s body byte for byte, then png inline
 * (image/png, base64, "usage.png").  The boundary is one the body does
 * not hold. */
char *email_compose_image(const char *from, const char *to, const char *subject,
                          const char *body, const unsigned char *png, size_t png_len,
                          time_t date);

#endif
