/* Shared by the unit tests: cmocka, and files in a private temp dir. */
#ifndef LOGINGUARD_TESTUTIL_H
#define LOGINGUARD_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

static char test_dir[64];

static inline const char *make_test_dir(void)
{
    snprintf(test_dir, sizeof(test_dir), "/tmp/lgunit.XXXXXX");
    if (!mkdtemp(test_dir))
        abort();
    return test_dir;
}

static inline void remove_test_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
    if (system(cmd) != 0)
        abort();
}

/* Write content to test_dir/name (subdirectories made as needed); returns
 * a static path. */
static inline const char *write_file(const char *name, const char *content)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0755);
    *slash = '/';
    FILE *f = fopen(path, "w");
    if (!f)
        abort();
    fputs(content, f);
    fclose(f);
    return path;
}

#endif
