#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "event_files.h"
#include "units.h"
#include "util.h"

struct rotated {
    unsigned long n;
    char *path;
};

/* N of a rotated copy's name (base.N or base.N.gz), or 0. */
static unsigned long rotation_number(const char *name, const char *base)
{
    size_t len = strlen(base);
    if (strncmp(name, base, len) != 0 || name[len] != '.')
        return 0;
    const char *p = name + len + 1;
    if (*p < '1' || *p > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long n = strtoul(p, &end, 10);
    if (errno || (*end && strcmp(end, ".gz") != 0))
        return 0;
    return n;
}

/* The highest number is the oldest copy; of FILE.N and FILE.N.gz (found
 * together while logrotate compresses), the plain one first. */
static int oldest_first(const void *a, const void *b)
{
    const struct rotated *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->path, y->path);
}

void event_files_list(const char *path, uint64_t since, struct event_files *out)
{
    memset(out, 0, sizeof(*out));
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    const char *base = slash ? slash + 1 : path;
    struct rotated *found = NULL;
    size_t count = 0, cap = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        unsigned long n = rotation_number(de->d_name, base);
        if (n == 0)
            continue;
        char *full = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(full, &st) < 0 || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_mtime * USEC_PER_SEC + USEC_PER_SEC <= since) {
            free(full);
            continue;
        }
        found = grow_array(found, count, &cap, sizeof(*found));
        found[count++] = (struct rotated){n, full};
    }
    if (d)
        closedir(d);
    free(dir);
    if (count)
        qsort(found, count, sizeof(*found), oldest_first);
    out->paths = xcalloc(count + 1, sizeof(*out->paths));
    for (size_t i = 0; i < count; i++) {
        if (i > 0 && found[i - 1].n == found[i].n)
            free(found[i].path);
        else
            out->paths[out->count++] = found[i].path;
    }
    free(found);
    out->paths[out->count++] = xstrdup(path);
}

void event_files_free(struct event_files *files)
{
    for (size_t i = 0; i < files->count; i++)
        free(files->paths[i]);
    free(files->paths);
    memset(files, 0, sizeof(*files));
}

int event_file_read(const char *path, struct event_lines *lines, event_line_fn *fn, void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    /* zlib reads a file that is not gzip as it is. */
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    gzbuffer(gz, 65536);
    char buf[65536];
    int n;
    while ((n = gzread(gz, buf, sizeof(buf))) > 0)
        event_lines_feed(lines, buf, (size_t)n, fn, arg);
    /* A stream cut short ends like a file, with Z_BUF_ERROR said. */
    int error = Z_OK, saved = errno;
    gzerror(gz, &error);
    gzclose(gz);
    if (n < 0 || error != Z_OK) {
        errno = error == Z_ERRNO ? saved : EIO;
        return -1;
    }
    return 0;
}
