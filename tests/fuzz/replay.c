/* Replays files through one fuzz target: how `make check` runs every
 * corpus as regression tests, built by the build's own compiler with its
 * sanitizers (no clang, no libFuzzer).
 *
 *   replay_NAME [FILE | DIR]...
 *
 * With no argument, the target's corpus: $LG_TOP_SRCDIR/tests/fuzz/corpus/NAME.
 * The inputs run in a child process, so that a crash (a sanitizer's
 * abort, a broken property) or a hang is reported with the file that
 * caused it.  The closing line counts the target as one test, the way
 * tools/test adds up results: "1 passed, 0 failed". */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "util.h"

/* A whole corpus replays in seconds, even under ASan; far more is a hang. */
#define REPLAY_SECONDS 300

struct inputs {
    char **paths;
    size_t count;
};

static void add_path(struct inputs *in, char *path)
{
    in->paths = xreallocarray(in->paths, in->count + 1, sizeof(*in->paths));
    in->paths[in->count++] = path;
}

static int skip_hidden(const struct dirent *de)
{
    return de->d_name[0] != '.';
}

/* A file, or the files of a directory in name order. */
static int collect(struct inputs *in, const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        add_path(in, xstrdup(path));
        return 0;
    }
    struct dirent **names;
    int n = scandir(path, &names, skip_hidden, alphasort);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        add_path(in, xasprintf("%s/%s", path, names[i]->d_name));
        free(names[i]);
    }
    free(names);
    return 0;
}

/* The file's bytes in a buffer of exactly its size, so that ASan sees a
 * read past the end of the input. */
static uint8_t *read_input(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(2);
    }
    uint8_t *data = xmalloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    size_t used = 0;
    ssize_t n;
    while (used < (size_t)st.st_size &&
           (n = read(fd, data + used, (size_t)st.st_size - used)) > 0)
        used += (size_t)n;
    close(fd);
    *size = used;
    return data;
}

/* LeakSanitizer's check, where the build has it (a sanitizer build):
 * after each input, so a leak is known by the input that made it. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* In the child: each input, its path first sent to the parent. */
static void replay(const struct inputs *in, int report)
{
    alarm(REPLAY_SECONDS);
    for (size_t i = 0; i < in->count; i++) {
        dprintf(report, "%s\n", in->paths[i]);
        size_t size;
        uint8_t *data = read_input(in->paths[i], &size);
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
            fprintf(stderr, "replay: memory leaked by %s\n", in->paths[i]);
            exit(3);
        }
    }
}

/* The last path the child sent: the input it was on. */
static void follow(int report, char *last, size_t last_len)
{
    char buf[4096];
    size_t used = 0;
    ssize_t n;
    last[0] = '\0';
    while ((n = read(report, buf + used, sizeof(buf) - 1 - used)) > 0) {
        used += (size_t)n;
        buf[used] = '\0';
        char *nl;
        while ((nl = strchr(buf, '\n')) != NULL) {
            *nl = '\0';
            copy_string(last, last_len, buf);
            used -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, used + 1);
        }
        if (used == sizeof(buf) - 1)
            used = 0; /* a path longer than the buffer: not ours to name */
    }
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    const char *name = strncmp(base, "replay_", 7) == 0 ? base + 7 : base;
    struct inputs in = {0};
    int bad = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            bad |= collect(&in, argv[i]);
    } else {
        const char *top = getenv("LG_TOP_SRCDIR");
        char *corpus = xasprintf("%s/tests/fuzz/corpus/%s", top ? top : TOP_SRCDIR, name);
        bad |= collect(&in, corpus);
        free(corpus);
    }
    if (bad || in.count == 0) {
        printf("%s: no inputs to replay\n0 passed, 1 failed\n", base);
        return 1;
    }

    int fds[2];
    if (pipe(fds) < 0) {
        perror("pipe");
        return 1;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        close(fds[0]);
        replay(&in, fds[1]);
        exit(0);
    }
    close(fds[1]);
    char last[4096];
    follow(fds[0], last, sizeof(last));
    close(fds[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok)
        printf("%s: %zu inputs replayed\n1 passed, 0 failed\n", base, in.count);
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d on %s\n0 passed, 1 failed\n", base, WTERMSIG(status),
               last);
    else
        printf("%s: exit status %d on %s\n0 passed, 1 failed\n", base, WEXITSTATUS(status),
               last);
    for (size_t i = 0; i < in.count; i++)
        free(in.paths[i]);
    free(in.paths);
    return ok ? 0 : 1;
}
