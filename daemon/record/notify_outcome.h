/* What became of a notice on one channel (desktop, email): the event
 * that reports it says which. */
#ifndef LOGINGUARD_NOTIFY_OUTCOME_H
#define LOGINGUARD_NOTIFY_OUTCOME_H

enum notify_outcome {
    NOTIFY_SENT,
    NOTIFY_SKIPPED, /* the channel does not reach this user (no session bus) */
    NOTIFY_FAILED,  /* err says why */
    NOTIFY_PENDING, /* a child is sending it: the outcome comes when it ends */
};

#endif
