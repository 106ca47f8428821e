#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "enforce/cgroup_mode.h"
#include "util.h"

/* The v1 controllers the cgroupfs backend uses. */
static bool names_backend_controller(const char *super_options)
{
    static const char *const wanted[] = {"cpu", "cpuacct", "memory", "pids"};
    char opts[1024];
    copy_string(opts, sizeof(opts), super_options);
    char *save = NULL;
    for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
            if (strcmp(o, wanted[i]) == 0)
                return true;
    return false;
}

/* A mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...]
 * - FSTYPE SOURCE SUPER_OPTS".  The optional fields vary in number, so
 * the fields after " - " are found by that separator. */
static void parse_line(char *line, bool *v1, bool *v2, char *v2_mount, size_t len)
{
    char *sep = strstr(line, " - ");
    if (!sep)
        return;
    *sep = '\0';
    char fstype[32], source[256], super[1024], mount[4096];
    if (sscanf(sep + 3, "%31s %255s %1023s", fstype, source, super) != 3 ||
        sscanf(line, "%*s %*s %*s %*s %4095s", mount) != 1)
        return;
    if (strcmp(fstype, "cgroup") == 0 && names_backend_controller(super))
        *v1 = true;
    else if (strcmp(fstype, "cgroup2") == 0 && !*v2) {
        copy_string(v2_mount, len, mount);
        *v2 = true;
    }
}

enum cgroup_mode cgroup_mode_parse(FILE *mountinfo, char *v2_mount, size_t len)
{
    bool v1 = false, v2 = false;
    char line[8192];
    while (fgets(line, sizeof(line), mountinfo))
        parse_line(line, &v1, &v2, v2_mount, len);
    return v1 ? CGROUP_MODE_V1 : v2 ? CGROUP_MODE_V2 : CGROUP_MODE_NONE;
}

enum cgroup_mode cgroup_mode_detect(const char *proc_root, char *v2_mount, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root);
    FILE *f = fopen(path, "re");
    if (!f)
        return CGROUP_MODE_NONE;
    enum cgroup_mode mode = cgroup_mode_parse(f, v2_mount, len);
    fclose(f);
    return mode;
}

int cgroup_own_v2_path(const char *proc_cgroup, char *buf, size_t len)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return -1;
    char line[4096];
    int rc = -1;
    while (rc < 0 && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "0::/", 4) == 0) {
            line[strcspn(line, "\n")] = '\0';
            copy_string(buf, len, line + 3);
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}
