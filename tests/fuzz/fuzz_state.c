/* STATE_DIR/state.json, read at every start: a file that does not parse
 * or has the wrong shape is moved aside, and one that loads is what the
 * daemon saves again. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "fuzz.h"
#include "record/state.h"
#include "util.h"

#define NOW 1700000000000000ULL /* a fixed clock: the same input, the same run */

static bool worth_saving(const struct user_state *u)
{
    return u->level > 0 || u->until || u->exempt_until || u->violations;
}

static bool same_user(const struct user_state *a, const struct user_state *b)
{
    return a->uid == b->uid && a->level == b->level && a->since == b->since &&
           a->until == b->until && a->quiet_since == b->quiet_since &&
           a->last_violation == b->last_violation && a->violations == b->violations &&
           a->exempt_until == b->exempt_until && a->last_reason == b->last_reason &&
           a->last_cpu == b->last_cpu && a->last_memory == b->last_memory &&
           a->last_window == b->last_window;
}

/* What was loaded is saved and loaded again, the same. */
static void check_round_trip(const char *dir, const struct engine_state *st)
{
    char err[512], moved[512];
    FUZZ_CHECK(state_save(dir, st, NOW, err, sizeof(err)) == 0);
    struct engine_state again = {0};
    FUZZ_CHECK(state_load(dir, &again, NOW, moved, sizeof(moved), err, sizeof(err)) ==
               STATE_LOADED);
    size_t j = 0;
    for (size_t i = 0; i < st->user_count; i++) {
        if (!worth_saving(&st->users[i]))
            continue;
        FUZZ_CHECK(j < again.user_count && same_user(&st->users[i], &again.users[j]));
        j++;
    }
    FUZZ_CHECK(j == again.user_count);
    engine_state_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_write("state/" STATE_FILE, data, size);
    char *dir = xstrndup(path, strlen(path) - strlen("/" STATE_FILE));
    struct engine_state st = {0};
    char err[512], moved[512];
    enum state_load_result res = state_load(dir, &st, NOW, moved, sizeof(moved), err,
                                            sizeof(err));
    switch (res) {
    case STATE_LOADED:
        for (size_t i = 0; i < st.user_count; i++) {
            FUZZ_CHECK(st.users[i].level >= 0 && st.users[i].level <= STATE_MAX_LEVEL);
            FUZZ_CHECK(st.users[i].uid != (uid_t)-1);
            FUZZ_CHECK(i == 0 || st.users[i - 1].uid < st.users[i].uid);
        }
        check_round_trip(dir, &st);
        break;
    case STATE_MOVED_ASIDE:
        /* The bytes are kept for the admin, under a new name. */
        FUZZ_CHECK(access(path, F_OK) < 0 && moved[0] && unlink(moved) == 0);
        FUZZ_CHECK(st.user_count == 0);
        break;
    default:
        fprintf(stderr, "%s\n", err);
        FUZZ_CHECK(!"a file we own in our directory loads or is moved aside");
    }
    unlink(path);
    engine_state_free(&st);
    free(dir);
    free(path);
    return 0;
}
