#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "util.h"

FILE *open_config_file(const char *path, struct errors *errs)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        errors_add(errs, path, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        errors_add(errs, path, 0, "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        errors_add(errs, path, 0, "cannot read: %s", strerror(errno));
        close(fd);
    }
    return f;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int compare_base_names(const void *a, const void *b)
{
    return strcmp(base_name(*(char *const *)a), base_name(*(char *const *)b));
}

static bool listed(const struct file_list *list, const char *name)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(base_name(list->paths[i]), name) == 0)
            return true;
    return false;
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0;
}

static int list_one_dir(const char *dir, const char *suffix, struct file_list *out,
                        struct errors *errs)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        errors_add(errs, dir, 0, "cannot read directory: %s", strerror(errno));
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, suffix) || listed(out, de->d_name))
            continue;
        out->paths = xreallocarray(out->paths, out->count + 1, sizeof(*out->paths));
        out->paths[out->count++] = xasprintf("%s/%s", dir, de->d_name);
    }
    closedir(d);
    return 0;
}

int list_dir_files(char *const *dirs, size_t dir_count, const char *suffix,
                   struct file_list *out, struct errors *errs)
{
    int rc = 0;
    for (size_t i = 0; i < dir_count; i++)
        if (list_one_dir(dirs[i], suffix, out, errs) < 0)
            rc = -1;
    if (out->count > 1)
        qsort(out->paths, out->count, sizeof(*out->paths), compare_base_names);
    return rc;
}

void file_list_free(struct file_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->paths[i]);
    free(list->paths);
    list->paths = NULL;
    list->count = 0;
}
