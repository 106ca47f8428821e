/* Running a script through a real shell and reading what it printed:
 * quoting is only right if the shell itself says so. */
#ifndef LOGINGUARD_SHUTIL_H
#define LOGINGUARD_SHUTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct sh_result {
    char *out; /* stdout, NUL-terminated, may hold NULs */
    size_t len;
    int status; /* exit status, or 128 + signal */
};

/* shell -c script, stdin from /dev/null, stderr discarded.  Aborts the
 * test if the shell cannot be run at all. */
static inline struct sh_result run_shell(const char *shell, const char *script)
{
    struct sh_result r = {0};
    int fds[2];
    if (pipe(fds) < 0)
        abort();
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 2);
        execl(shell, shell, "-c", script, (char *)NULL);
        _exit(126);
    }
    close(fds[1]);
    size_t cap = 256;
    r.out = malloc(cap);
    ssize_t n;
    while ((n = read(fds[0], r.out + r.len, cap - r.len - 1)) > 0) {
        r.len += (size_t)n;
        if (cap - r.len < 2)
            r.out = realloc(r.out, cap *= 2);
    }
    r.out[r.len] = '\0';
    close(fds[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0)
        abort();
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

/* Printable ASCII and newline only: nothing that could move a terminal. */
static inline bool terminal_safe(const char *s)
{
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        if (*u != '\n' && (*u < 0x20 || *u > 0x7e))
            return false;
    return true;
}

#endif
