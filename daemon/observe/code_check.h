/* Whether a process runs only its own code: what an exempt program's
 * allowance asks of it.
 *
 * An exempt program (tmux, sshd's session process, gpg-agent...) that is
 * not setuid can be made to run its user's code: a library preloaded
 * (LD_PRELOAD, LD_AUDIT), a tracer that writes into it, code written
 * into its memory.  Such a process is judged as class none.  It runs
 * only its own code when: no LD_PRELOAD or LD_AUDIT in its environment,
 * no tracer, every executable mapping is of a file owned by root and
 * writable by no one else (the very file: device and inode as mapped),
 * none of those mappings has a page changed in memory (smaps'
 * Anonymous), and no anonymous executable memory but the kernel's own
 * ([vdso], [vsyscall], [uprobes]).
 *
 * Reading environ and smaps takes the process's memory-map lock, which
 * its owner can hold up: the check runs in the command line reader's
 * helper (argv_reader.h), which is replaced when it stalls. */
#ifndef LOGINGUARD_CODE_CHECK_H
#define LOGINGUARD_CODE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds on what one check reads (a process's owner chooses their size):
 * past either, the process is not known to run only its own code.  A
 * megabyte of smaps is about a thousand mappings (a small program has 25,
 * sshd or tmux a hundred or two); reading it costs some 7 ms of CPU
 * (make bench). */
#define CODE_ENV_CAP (256 * 1024)
#define CODE_SMAPS_CAP (1024 * 1024)
/* Room for the reason a process fails the check, with its NUL. */
#define CODE_WHY_MAX 240

/* One executable mapping, as smaps shows it. */
struct code_mapping {
    unsigned dev_major, dev_minor;
    uint64_t inode;
    const char *path;     /* not NUL-terminated: path_len bytes */
    size_t path_len;
    uint64_t anonymous_kb; /* pages changed in memory */
};

/* Whether a file mapping is of a file only root can change: a callback,
 * so that tests can say.  False with why filled in. */
typedef bool (*code_file_ok)(const struct code_mapping *m, char *why, size_t why_len, void *arg);

/* The parts, on the texts /proc gives (len bytes, not NUL-terminated).
 * Each returns true when the process passes, else false with why. */
bool code_environ_clean(const char *env, size_t len, char *why, size_t why_len);
bool code_status_clean(const char *status, size_t len, char *why, size_t why_len);
bool code_smaps_clean(const char *smaps, size_t len, code_file_ok file_ok, void *arg, char *why,
                      size_t why_len);

/* The file check of a mapping in this mount namespace: stat by path, the
 * same device and inode as mapped, owner root, no write bit for group or
 * others. */
bool code_file_is_roots(const struct code_mapping *m, char *why, size_t why_len, void *arg);

/* The whole check of the process whose /proc directory is dirfd: 1 it
 * runs only its own code, 0 it does not (why says), -1 it could not be
 * read (gone). */
int code_check(int dirfd, char *why, size_t why_len);

#endif
