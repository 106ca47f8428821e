/* A fake cgroup2 tree in a temporary directory, for the cgroupfs
 * backend's v2 path (its dirops): the kernel's part is played by
 * fake_make, which fills a new cgroup with the interface files the kernel
 * would give it from its parent's cgroup.subtree_control.  It stands in
 * for the kernel because this test host is a v1 hybrid whose cgroup2
 * mount has no cpu, memory or pids controller.  Shared by test_cgroupfs_v2
 * and test_actions, which set root (test_dir/root). */
#ifndef LOGINGUARD_FAKE_CGROUP2_H
#define LOGINGUARD_FAKE_CGROUP2_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce/cgroupfs_v2.h"
#include "testutil.h"

static char root[128];

static inline void put_at(int dirfd, const char *file, const char *text)
{
    int fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
}

static inline int fake_make(int dirfd, const char *name)
{
    if (mkdirat(dirfd, name, 0755) < 0)
        return -1;
    char given[256] = "";
    int pfd = openat(dirfd, "cgroup.subtree_control", O_RDONLY);
    if (pfd >= 0) {
        ssize_t n = read(pfd, given, sizeof(given) - 1);
        given[n > 0 ? n : 0] = '\0';
        close(pfd);
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
    put_at(fd, "cgroup.procs", "");
    put_at(fd, "cgroup.events", "populated 0\nfrozen 0\n");
    put_at(fd, "cgroup.subtree_control", "");
    put_at(fd, "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
    char controllers[256] = "";
    if (strstr(given, "cpu")) {
        put_at(fd, "cpu.max", "max 100000\n");
        strcat(controllers, "cpu ");
    }
    if (strstr(given, "memory")) {
        put_at(fd, "memory.high", "max\n");
        put_at(fd, "memory.max", "max\n");
        strcat(controllers, "memory ");
    }
    if (strstr(given, "pids")) {
        put_at(fd, "pids.max", "max\n");
        strcat(controllers, "pids");
    }
    put_at(fd, "cgroup.controllers", controllers);
    close(fd);
    return 0;
}

static inline int fake_remove(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            unlinkat(fd, de->d_name, 0);
    closedir(d);
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

static const struct cgv2_dirops fake_ops = {fake_make, fake_remove};

/* The content of root/path, or "(missing)". */
static inline const char *slurp(const char *path)
{
    static char buf[512];
    char full[512];
    snprintf(full, sizeof(full), "%s/%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return "(missing)";
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static inline bool exists(const char *path)
{
    char full[512];
    snprintf(full, sizeof(full), "%s/%s", root, path);
    return access(full, F_OK) == 0;
}

/* A daemon's cgroup as a service manager leaves it: controllers
 * available, none given to children yet, the daemon inside. */
static inline void make_own(const char *own, const char *controllers)
{
    char path[256];
    snprintf(path, sizeof(path), "%s%s", root, own);
    for (char *slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    mkdir(path, 0755);
    char name[160];
    snprintf(name, sizeof(name), "root%.64s/cgroup.controllers", own);
    write_file(name, controllers);
    snprintf(name, sizeof(name), "root%.64s/cgroup.subtree_control", own);
    write_file(name, "");
    snprintf(name, sizeof(name), "root%.64s/cgroup.procs", own);
    write_file(name, "4242\n");
}

#endif
