/* What a mailed notice's chart shows ([notify] email_chart): the user's
 * last hour from the daemon's hour rings (history.h), a point a minute,
 * as loginguardctl me shows it in text. */
#ifndef LOGINGUARD_EMAIL_CHART_H
#define LOGINGUARD_EMAIL_CHART_H

#include <stdint.h>
#include <sys/types.h>

#include "history.h"
#include "notify/notify_email.h"

struct email_chart_data {
    struct report_point points[HISTORY_POINTS];
    char title[160];
    struct email_chart chart;   /* pointing into the above */
};

/* uid's hour as of now (realtime usec); a user without a ring gets an
 * hour of zeros.  user: the name for the title (NULL or empty: the uid). */
void email_chart_build(struct email_chart_data *d, const struct history *h, uid_t uid,
                       const char *user, uint64_t now, double cpu_threshold);

#endif
