#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "enforce/proc_table.h"
#include "util.h"

struct table_proc *proc_table_add(struct proc_table *t)
{
    t->procs = grow_array(t->procs, t->count, &t->capacity, sizeof(*t->procs));
    struct table_proc *p = &t->procs[t->count++];
    memset(p, 0, sizeof(*p));
    return p;
}

void proc_table_free(struct proc_table *t)
{
    free(t->procs);
    memset(t, 0, sizeof(*t));
}

struct child_link {
    pid_t ppid;
    bool taken;     /* parents read at different moments may make a loop */
    const struct table_proc *p;
};

static int by_ppid(const void *a, const void *b)
{
    const struct child_link *x = a, *y = b;
    return x->ppid < y->ppid ? -1 : x->ppid > y->ppid;
}

/* The first link whose parent is ppid, in links sorted by parent. */
static size_t first_child(const struct child_link *links, size_t n, pid_t ppid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (links[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void add_target(struct stop_target **out, size_t *n, size_t *capacity,
                       const struct table_proc *p)
{
    *out = grow_array(*out, *n, capacity, sizeof(**out));
    struct stop_target *x = &(*out)[(*n)++];
    memset(x, 0, sizeof(*x));
    x->pid = p->pid;
    x->start_time = p->start_time;
    x->uid = p->uid;
    memcpy(x->comm, p->comm, sizeof(x->comm));
    copy_string(x->exe, sizeof(x->exe), p->exe);
}

/* The processes sorted by parent, then a walk down from pid: each
 * process is looked at once, so a stop of a large tree costs n log n,
 * not n squared. */
size_t proc_table_tree(const struct proc_table *t, pid_t pid, struct stop_target **out)
{
    struct child_link *links = xmalloc((t->count + 1) * sizeof(*links));
    size_t count = 0, n = 0, out_capacity = 0;
    const struct table_proc *root = NULL;
    *out = NULL;
    for (size_t i = 0; i < t->count; i++) {
        const struct table_proc *p = &t->procs[i];
        if (p->class == CLASS_EXEMPT || p->slurm_job)
            continue;
        if (p->pid == pid)
            root = p;
        links[count++] = (struct child_link){p->ppid, p == root, p};
    }
    if (root) {
        qsort(links, count, sizeof(*links), by_ppid);
        add_target(out, &n, &out_capacity, root);
        /* *out doubles as the queue: entries before `next` are done. */
        for (size_t next = 0; next < n; next++) {
            pid_t parent = (*out)[next].pid;
            for (size_t i = first_child(links, count, parent);
                 i < count && links[i].ppid == parent; i++) {
                if (!links[i].taken)
                    add_target(out, &n, &out_capacity, links[i].p);
                links[i].taken = true;
            }
        }
    }
    free(links);
    return n;
}

size_t proc_table_pids(const struct proc_table *t, pid_t **out)
{
    *out = xmalloc((t->count + 1) * sizeof(**out));
    for (size_t i = 0; i < t->count; i++)
        (*out)[i] = t->procs[i].pid;
    return t->count;
}

void proc_table_fill(struct proc_table *out, const struct known_procs *k, uid_t owner)
{
    out->count = 0;
    KNOWN_FOR_EACH(k, t) {
        if (t->ignored || t->owner != owner)
            continue;
        struct table_proc *p = proc_table_add(out);
        p->pid = t->pid;
        p->ppid = t->ppid;
        p->start_time = t->start_time;
        p->uid = t->uid;
        p->class = t->class;
        p->slurm_job = t->slurm_job;
        memcpy(p->comm, t->comm, sizeof(p->comm));
        copy_string(p->exe, sizeof(p->exe), t->prog && t->prog->exe ? t->prog->exe : "");
    }
}
