#include "config.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "programs.h"
#include "util.h"

#define BITS 64

void sha256_hex(const void *data, size_t len, char out[65])
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, data);
    sha256_digest(&ctx, sizeof(digest), digest);
    for (size_t i = 0; i < sizeof(digest); i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

/* Everything that tells two programs apart, hashed: the whole exe path
 * (two long paths may share any prefix), whether it is trusted, and the
 * command line's digest (or that it is unknown). */
static void program_key(const struct program_facts *f, uint8_t key[32])
{
    struct sha256_ctx ctx;
    uint8_t flags[3] = {f->exe != NULL, f->exe_trusted, f->exe_file_known};
    sha256_init(&ctx);
    sha256_update(&ctx, sizeof(flags), flags);
    if (!f->exe_trusted && f->exe_file_known) {
        uint64_t file[2] = {(uint64_t)f->exe_dev, (uint64_t)f->exe_ino};
        sha256_update(&ctx, sizeof(file), (const uint8_t *)file);
    }
    if (f->exe)
        sha256_update(&ctx, strlen(f->exe) + 1, (const uint8_t *)f->exe);
    if (f->argv && f->argv_sha256 && f->argv_sha256[0])
        sha256_update(&ctx, strlen(f->argv_sha256), (const uint8_t *)f->argv_sha256);
    sha256_digest(&ctx, 32, key);
}

static size_t bucket_of(const struct program_table *t, const uint8_t key[32])
{
    uint64_t h;
    memcpy(&h, key, sizeof(h));
    return (size_t)(h & (t->bucket_count - 1));
}

static void grow(struct program_table *t)
{
    size_t old_count = t->bucket_count;
    struct program **old = t->buckets;
    t->bucket_count = old_count ? old_count * 2 : 256;
    t->buckets = xcalloc(t->bucket_count, sizeof(*t->buckets));
    for (size_t i = 0; i < old_count; i++) {
        for (struct program *p = old[i], *next; p; p = next) {
            next = p->next;
            size_t b = bucket_of(t, p->key);
            p->next = t->buckets[b];
            t->buckets[b] = p;
        }
    }
    free(old);
}

/* Rules see the path a binary was started from: after a package upgrade
 * replaced /usr/sbin/sshd, the running one reads "/usr/sbin/sshd
 * (deleted)".  Only root can put a file in such a path (the path is
 * trusted only where it means the same to us), so dropping the suffix
 * lets no user's program pass as another. */
static char *rule_path(const struct program_facts *f)
{
    static const char deleted[] = " (deleted)";
    if (!f->exe)
        return NULL;
    char *exe = xstrdup(f->exe);
    size_t n = strlen(exe), d = sizeof(deleted) - 1;
    if (n > d && strcmp(exe + n - d, deleted) == 0)
        exe[n - d] = '\0';
    return exe;
}

/* The rules see the arguments joined by spaces. */
static char *rule_cmdline(const struct program_facts *f)
{
    if (!f->argv)
        return NULL;
    char *cmdline = xmalloc(f->argv_len + 1);
    for (size_t i = 0; i < f->argv_len; i++)
        cmdline[i] = f->argv[i] ? f->argv[i] : ' ';
    cmdline[f->argv_len] = '\0';
    return cmdline;
}

static struct program *judge(const struct rule_set *rules, const struct program_facts *f,
                             const uint8_t key[32])
{
    size_t words = (rules->count + BITS - 1) / BITS;
    struct program *p = xcalloc(1, sizeof(*p) + words * sizeof(uint64_t));
    memcpy(p->key, key, sizeof(p->key));
    p->exe = f->exe ? xstrndup(f->exe, EXE_SHOWN) : NULL;
    p->exe_trusted = f->exe_trusted;
    p->argv_known = f->argv != NULL;
    p->argv_total = f->argv ? f->argv_total : 0;
    if (f->argv && f->argv_sha256)
        copy_string(p->argv_sha256, sizeof(p->argv_sha256), f->argv_sha256);
    char *exe = rule_path(f);
    char *cmdline = rule_cmdline(f);
    for (size_t i = 0; i < rules->count; i++) {
        const struct rule *r = &rules->rules[i];
        bool exe_ok = f->exe_trusted || !r->exe
                          ? rule_matches_exe(r, exe)
                          : f->exe_file_known && rule_names_file(r, f->exe_dev, f->exe_ino);
        if (exe_ok && rule_matches_argv(r, cmdline))
            p->matches[i / BITS] |= UINT64_C(1) << (i % BITS);
    }
    free(exe);
    free(cmdline);
    return p;
}

const struct program *programs_get(struct program_table *t, const struct rule_set *rules,
                                   const struct program_facts *f)
{
    uint8_t key[32];
    program_key(f, key);
    if (t->bucket_count == 0 || t->count >= t->bucket_count)
        grow(t);
    size_t b = bucket_of(t, key);
    for (struct program *p = t->buckets[b]; p; p = p->next) {
        if (memcmp(p->key, key, sizeof(key)) == 0) {
            p->refs++;
            return p;
        }
    }
    struct program *p = judge(rules, f, key);
    p->refs = 1;
    p->next = t->buckets[b];
    t->buckets[b] = p;
    t->count++;
    return p;
}

void programs_put(struct program_table *t, const struct program *prog)
{
    if (!prog)
        return;
    struct program **pp = &t->buckets[bucket_of(t, prog->key)];
    while (*pp != prog)
        pp = &(*pp)->next;
    struct program *p = *pp;
    if (--p->refs > 0)
        return;
    *pp = p->next;
    t->count--;
    free(p->exe);
    free(p);
}

const struct rule *programs_classify(const struct rule_set *rules, const struct program *prog,
                                     const char *comm)
{
    const struct rule *best = NULL;
    for (size_t i = 0; prog && i < rules->count; i++) {
        const struct rule *r = &rules->rules[i];
        if ((prog->matches[i / BITS] >> (i % BITS) & 1) && (!best || r->class > best->class) &&
            rule_matches_comm(r, comm))
            best = r;
    }
    return best;
}

void programs_free(struct program_table *t)
{
    for (size_t i = 0; i < t->bucket_count; i++) {
        for (struct program *p = t->buckets[i], *next; p; p = next) {
            next = p->next;
            free(p->exe);
            free(p);
        }
    }
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}
