/* What a broken or hostile peer of the cluster link could send: a
 * standing row, a node's record and the raises after a forgive's base,
 * as JSON ({"row":{..},"change":{..},"later":[{..}, ..]}).  Each parses
 * or is refused with why; a row reads back as written; and the merge
 * keeps its promises (cluster_merge.h): a raise never loses a penalty, a
 * stale lower changes nothing, an exemption touches only exempt_until, a
 * forgive gives back the stronger of its penalty and the raises it keeps,
 * and "nothing changed" means nothing did. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_codec.h"
#include "fuzz.h"

#define LATER_MAX 16

static bool same_row(const struct shared_standing *a, const struct shared_standing *b)
{
    return a->uid == b->uid && a->rev == b->rev && a->seq == b->seq &&
           a->exempt_until == b->exempt_until && strcmp(a->node, b->node) == 0 &&
           penalty_compare(&a->penalty, &b->penalty) == 0;
}

static void check_row_round_trip(const struct shared_standing *row)
{
    char why[256];
    json_t *o = standing_to_json(row);
    FUZZ_CHECK(o != NULL);
    struct shared_standing back;
    FUZZ_CHECK(standing_from_json(o, &back, why, sizeof(why)) == 0);
    FUZZ_CHECK(same_row(row, &back));
    json_decref(o);
}

/* The stronger of c's penalty and every raise of later the forgive keeps. */
static struct penalty forgive_result(const struct standing_change *c,
                                     const struct standing_change *later, size_t n)
{
    struct penalty p = c->penalty;
    for (size_t i = 0; i < n; i++) {
        bool own_earlier = strcmp(later[i].node, c->node) == 0 && later[i].seq < c->seq;
        if (later[i].kind == CHANGE_RAISE && later[i].uid == c->uid && !own_earlier &&
            penalty_compare(&later[i].penalty, &p) > 0)
            p = later[i].penalty;
    }
    return p;
}

static void check_merge(const struct shared_standing *before, const struct standing_change *c,
                        const struct standing_change *later, size_t n)
{
    struct shared_standing row = *before;
    bool current = standing_change_current(before, c);
    bool changed = standing_merge(&row, c, later, n);
    /* The merge moves only the penalty and exempt_until; the caller the rest. */
    FUZZ_CHECK(row.uid == before->uid && row.rev == before->rev && row.seq == before->seq);
    FUZZ_CHECK(strcmp(row.node, before->node) == 0);
    if (!changed)
        FUZZ_CHECK(same_row(&row, before));
    else
        FUZZ_CHECK(!same_row(&row, before));
    int vs_before = penalty_compare(&row.penalty, &before->penalty);
    switch (c->kind) {
    case CHANGE_RAISE:
        FUZZ_CHECK(row.exempt_until == before->exempt_until);
        if (current) {
            FUZZ_CHECK(penalty_compare(&row.penalty, &c->penalty) == 0);
        } else {
            FUZZ_CHECK(vs_before >= 0 && penalty_compare(&row.penalty, &c->penalty) >= 0);
        }
        break;
    case CHANGE_LOWER:
        FUZZ_CHECK(row.exempt_until == before->exempt_until);
        if (current)
            FUZZ_CHECK(penalty_compare(&row.penalty, &c->penalty) == 0);
        else
            FUZZ_CHECK(!changed);
        break;
    case CHANGE_FORGIVE: {
        FUZZ_CHECK(row.exempt_until == before->exempt_until);
        struct penalty want = forgive_result(c, later, n);
        FUZZ_CHECK(penalty_compare(&row.penalty, &want) == 0);
        break;
    }
    case CHANGE_EXEMPT:
        FUZZ_CHECK(vs_before == 0 && row.exempt_until == c->exempt_until);
        break;
    }
    /* A stale raise or an exemption, applied again, changes nothing more. */
    if (changed && (c->kind == CHANGE_EXEMPT || (c->kind == CHANGE_RAISE && !current))) {
        struct shared_standing again = row;
        FUZZ_CHECK(!standing_merge(&again, c, later, n));
    }
}

static size_t read_later(const json_t *arr, const char *node, struct standing_change *later)
{
    size_t n = 0, i;
    const json_t *v;
    char why[256], by[CLUSTER_BY_MAX];
    json_array_foreach(arr, i, v) {
        uint64_t at;
        if (n == LATER_MAX || change_from_json(v, &later[n], &at, by, sizeof(by), why,
                                               sizeof(why)) < 0)
            continue;
        /* Another node's, or this one's: the record's own "node", if any. */
        const char *name = json_string_value(json_object_get(v, "node"));
        snprintf(later[n].node, sizeof(later[n].node), "%.63s", name ? name : node);
        n++;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return 0;
    char why[256], by[CLUSTER_BY_MAX];
    struct shared_standing row;
    struct standing_change c;
    uint64_t at;
    int row_rc = standing_from_json(json_object_get(root, "row"), &row, why, sizeof(why));
    if (row_rc < 0)
        FUZZ_CHECK(why[0] != '\0');
    else
        check_row_round_trip(&row);
    int change_rc = change_from_json(json_object_get(root, "change"), &c, &at, by, sizeof(by),
                                     why, sizeof(why));
    if (change_rc < 0)
        FUZZ_CHECK(why[0] != '\0');
    if (row_rc == 0 && change_rc == 0) {
        const char *node = json_string_value(json_object_get(root, "node"));
        snprintf(c.node, sizeof(c.node), "%.63s", node ? node : "n1");
        struct standing_change later[LATER_MAX];
        size_t n = read_later(json_object_get(root, "later"), c.node, later);
        check_merge(&row, &c, later, n);
    }
    json_decref(root);
    return 0;
}
