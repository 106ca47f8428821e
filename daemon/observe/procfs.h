/* Parsing /proc/PID/stat.  The process name (comm) is chosen by the user
 * and may hold spaces, parentheses and newlines: it is everything between
 * the first '(' and the LAST ')', and nothing after it is trusted before
 * it parses as numbers. */
#ifndef LOGINGUARD_PROCFS_H
#define LOGINGUARD_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h" /* COMM_LEN */


struct proc_stat {
    pid_t pid;
    char comm[COMM_LEN];
    char state;
    pid_t ppid;
    pid_t session;
    int tty_nr;           /* controlling terminal's device number, 0 for none */
    uint64_t utime;       /* clock ticks, whole thread group */
    uint64_t stime;
    uint64_t num_threads;
    uint64_t start_time;  /* clock ticks after boot */
    uint64_t rss_pages;
};

/* Parse the text of /proc/PID/stat (not NUL-terminated; len bytes).
 * Returns 0, or -1 when the text is not a stat line. */
int procfs_parse_stat(const char *buf, size_t len, struct proc_stat *out);

/* Read the first line-worth of a /proc file into buf with pread at offset
 * 0 on a held descriptor; returns bytes read or -1 (errno set; ESRCH and
 * 0 bytes mean the process is gone). */
ssize_t procfs_pread(int fd, char *buf, size_t len);

/* Process pid as /proc (the directory proc_fd) shows it now: its owner
 * (the uid of its /proc directory) and its stat line.  False when there
 * is no such process or it is gone by the second read. */
bool procfs_read_process(int proc_fd, pid_t pid, uid_t *uid, struct proc_stat *st);

#endif
