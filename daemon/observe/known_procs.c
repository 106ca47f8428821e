/* The table of known processes (known_procs.h): chained hashing on the
 * pid, grown by doubling. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "observe/known_procs.h"
#include "util.h"

static size_t bucket_of(const struct known_procs *k, pid_t pid)
{
    return ((size_t)pid * 2654435761u) & (k->bucket_count - 1);
}

struct tracked_proc *known_lookup(const struct known_procs *k, pid_t pid)
{
    if (!k->bucket_count)
        return NULL;
    for (struct tracked_proc *t = k->buckets[bucket_of(k, pid)]; t; t = t->next)
        if (t->pid == pid)
            return t;
    return NULL;
}

static void grow(struct known_procs *k)
{
    size_t old_count = k->bucket_count;
    struct tracked_proc **old = k->buckets;
    k->bucket_count = old_count ? old_count * 2 : 1024;
    k->buckets = xcalloc(k->bucket_count, sizeof(*k->buckets));
    for (size_t i = 0; i < old_count; i++) {
        for (struct tracked_proc *t = old[i], *next; t; t = next) {
            next = t->next;
            size_t b = bucket_of(k, t->pid);
            t->next = k->buckets[b];
            k->buckets[b] = t;
        }
    }
    free(old);
}

void known_insert(struct known_procs *k, struct tracked_proc *t)
{
    if (k->count >= k->bucket_count)
        grow(k);
    size_t b = bucket_of(k, t->pid);
    t->next = k->buckets[b];
    k->buckets[b] = t;
    k->count++;
}

void known_remove(struct known_procs *k, struct tracked_proc *t)
{
    struct tracked_proc **pp = &k->buckets[bucket_of(k, t->pid)];
    while (*pp != t)
        pp = &(*pp)->next;
    *pp = t->next;
    k->count--;
}

void known_free(struct known_procs *k)
{
    free(k->buckets);
    memset(k, 0, sizeof(*k));
}
