/* Notices under way.  Desktop and mail notices: each is a child (a process that
 * has become the user and talks to their session bus, or the site's
 * sendmail) that the main loop watches, so that a user's hung bus or a
 * hung mail system delays nobody's sample.  At most NOTICE_JOBS_MAX at
 * once; a notice beyond that fails on that channel, saying why. */
#ifndef LOGINGUARD_NOTICE_JOBS_H
#define LOGINGUARD_NOTICE_JOBS_H

#include <stdbool.h>
#include <sys/types.h>

#include "notices.h"
#include "notify/notify_desktop.h"
#include "notify/notify_email.h"
#include "notify/slurm_check.h"

#define NOTICE_JOBS_MAX 32
/* Notices waiting for Slurm's word on their lines (slurm_check.h); a
 * notice beyond that goes out with its lines unchecked. */
#define SLURM_CHECKS_MAX 8

struct notice_job {
    bool email;                 /* else desktop */
    union {
        struct desktop_send desktop;
        struct email_send email;
    } send;
    uid_t uid;
    enum notice_kind kind;
    char *user;
};

struct notice_jobs {
    struct notice_job items[NOTICE_JOBS_MAX];
    size_t count;
    struct slurm_check checks[SLURM_CHECKS_MAX];
    size_t check_count;
};

#endif
