/* Pids with flags, gathered between two samples: what the proc
 * connector said about each process (see sampler_note_event).  One
 * entry a pid however many events it had, in the order first seen. */
#ifndef LOGINGUARD_PIDMARKS_H
#define LOGINGUARD_PIDMARKS_H

#include <stddef.h>
#include <sys/types.h>

struct pid_mark {
    pid_t pid;
    unsigned flags;
};

struct pid_marks {
    struct pid_mark *marks;  /* count used, in arrival order */
    size_t count, capacity;
    size_t *index;           /* open addressing into marks; SIZE_MAX = free */
    size_t index_size;       /* a power of two, > 2 * count */
};

/* The flags of pid, a new entry (flags 0) if it had none. */
unsigned *pid_marks_get(struct pid_marks *m, pid_t pid);
/* Empty again (the memory stays for the next interval). */
void pid_marks_clear(struct pid_marks *m);
void pid_marks_free(struct pid_marks *m);

#endif
