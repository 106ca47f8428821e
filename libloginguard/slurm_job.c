#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "slurm_job.h"

/* A number as Slurm prints one (%u: no sign, no leading zero), at most
 * max, at *at; *at moves past it.  -1 when there is none. */
static int64_t number_at(const char **at, const char *end, uint64_t max)
{
    const char *p = *at;
    uint64_t n = 0;
    if (p == end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' &&
                                             p[1] <= '9'))
        return -1;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (uint64_t)(*p - '0');
        if (n > max)
            return -1;
    }
    *at = p;
    return (int64_t)n;
}

/* path (len bytes) begins with prefix; *at is what follows. */
static bool starts(const char *path, const char *end, const char *prefix, const char **at)
{
    size_t n = strlen(prefix);
    if ((size_t)(end - path) < n || memcmp(path, prefix, n) != 0)
        return false;
    *at = path + n;
    return true;
}

/* "job_N" ending the path or followed by '/': N, else -1. */
static int64_t job_at(const char *p, const char *end)
{
    if (!starts(p, end, "job_", &p))
        return -1;
    int64_t job = number_at(&p, end, SLURM_JOB_UNKNOWN - 1);
    return job > 0 && (p == end || *p == '/') ? job : -1;
}

/* The paths below are without their leading '/' (parse_line saw it):
 * a path relative to a hierarchy's root. */

/* Slurm's cgroup/v1 plugin: /slurm/uid_U/job_N, at the root of the
 * hierarchy.  Not below another cgroup: a user may make any names in the
 * subtree systemd delegates to them (the name=systemd hierarchy, the v2
 * one of a hybrid host), which never starts at a hierarchy's root, and
 * Slurm's plugin makes its tree at the root of each controller's mount,
 * not below its own cgroup.  (A slurmd in a container that has a cgroup
 * namespace of its own shows its jobs below the container's cgroup to
 * the host: such a job is not known for one here.) */
static int64_t v1_job(const char *path, const char *end)
{
    const char *p;
    if (!starts(path, end, "slurm/uid_", &p) || number_at(&p, end, UINT32_MAX) < 0 ||
        !starts(p, end, "/", &p))
        return -1;
    return job_at(p, end);
}

/* Slurm's cgroup/v2 plugin under systemd: the job's cgroups are below
 * slurmstepd.scope, which slurmd makes directly below /system.slice
 * (root's), or NODE_slurmstepd.scope where Slurm is built to run several
 * slurmd on one host (Debian's is: loginnode_slurmstepd.scope, seen on
 * the VM); a slurmstepd.scope anywhere else (in a user's own subtree:
 * /user.slice/.../app.slice/slurmstepd.scope/job_5) is no job's. */
static int64_t v2_job(const char *path, const char *end)
{
    static const char scope[] = "slurmstepd.scope/";
    const size_t len = sizeof(scope) - 1;
    const char *p;
    if (!starts(path, end, "system.slice/", &p))
        return -1;
    const char *slash = memchr(p, '/', (size_t)(end - p));
    if (!slash || (size_t)(slash + 1 - p) < len || memcmp(slash + 1 - len, scope, len) != 0)
        return -1;
    const char *name_end = slash + 1 - len; /* the node's name ends here, with '_' */
    if (name_end != p && (name_end - p < 2 || name_end[-1] != '_'))
        return -1;
    return job_at(slash + 1, end);
}

/* One line of /proc/PID/cgroup: "ID:CONTROLLERS:PATH".  The path is
 * last (it may hold colons of its own) and starts with '/'. */
struct cgroup_line {
    int64_t id;
    bool v2;            /* "0::", the v2 hierarchy */
    const char *path, *end; /* the path after its leading '/' */
};

static bool parse_line(const char *p, const char *end, struct cgroup_line *out)
{
    out->id = number_at(&p, end, 1u << 30);
    if (out->id < 0 || p == end || *p != ':')
        return false;
    const char *names = p + 1;
    const char *c2 = memchr(names, ':', (size_t)(end - names));
    if (!c2 || c2 + 1 == end || c2[1] != '/')
        return false;
    out->v2 = out->id == 0 && c2 == names;
    out->path = c2 + 2;
    out->end = end;
    return true;
}

/* The kernel writes one line a hierarchy, the newest first: their ids
 * fall line by line, and the v2 hierarchy's (0) is the last.  Kernels
 * refuse a newline in a cgroup's name, but older ones took it: a name
 * with one, in a user's own subtree, could add lines of the user's
 * making after its own.  Such lines break the order, or make a v2 line
 * that is not alone, so text out of order is no job's at all, and the
 * v2 shape counts only as the one line there is (Slurm's cgroup/v2
 * plugin runs only where the v2 hierarchy is the only one).  The v1
 * lines that name a job must all name the same one. */
int64_t slurm_job_of_cgroup(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    int64_t v1 = -1, v2 = -1, last_id = -1;
    size_t lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        struct cgroup_line l;
        if (!parse_line(p, line_end, &l) || (last_id >= 0 && l.id >= last_id) ||
            (l.id == 0 && !l.v2))
            return -1;
        last_id = l.id;
        lines++;
        p = line_end + 1;
        if (l.v2) {
            v2 = v2_job(l.path, l.end);
            continue;
        }
        int64_t here = v1_job(l.path, l.end);
        if (here >= 0 && v1 >= 0 && here != v1)
            return -1;
        if (here >= 0)
            v1 = here;
    }
    return lines == 1 && v2 >= 0 ? v2 : v1;
}

int64_t slurm_job_of_title(const char *text, size_t len)
{
    const char *p, *end = text + len;
    if (!starts(text, end, SLURM_STEPD_COMM ": [", &p))
        return -1;
    int64_t job = number_at(&p, end, SLURM_JOB_UNKNOWN - 1);
    return job > 0 && p < end && (*p == '.' || *p == '+' || *p == ']') ? job : -1;
}
