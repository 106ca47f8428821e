/* The helpers of fuzz.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "util.h"

static char dir[256];

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: property broken: %s\n", file, line, what);
    abort();
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_dir(void)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
    if (dir[0])
        return dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/lgfuzz.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "fuzz: cannot make a directory %s: %s\n", dir, strerror(errno));
        abort();
    }
    atexit(remove_dir);
    return dir;
}

/* The directories of path below fuzz_dir(). */
static void make_parents(char *path)
{
    for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(path, 0700) < 0 && errno != EEXIST) {
            fprintf(stderr, "fuzz: cannot make %s: %s\n", path, strerror(errno));
            abort();
        }
        *slash = '/';
    }
}

char *fuzz_write(const char *name, const void *data, size_t size)
{
    char *path = xasprintf("%s/%s", fuzz_dir(), name);
    make_parents(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) < 0) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
    return path;
}

int fuzz_next_piece(struct fuzz_pieces *p, char **piece, size_t *len)
{
    if (p->at >= p->end)
        return 0;
    const uint8_t *nul = memchr(p->at, '\0', (size_t)(p->end - p->at));
    const uint8_t *stop = nul ? nul : p->end;
    *len = (size_t)(stop - p->at);
    *piece = xstrndup((const char *)p->at, *len);
    p->at = nul ? nul + 1 : p->end;
    return 1;
}
