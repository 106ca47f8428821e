/* STATE_DIR/notified.json, the times of the notices sent (the rate limit
 * across restarts): whatever the file holds, what loads is what is saved
 * and loaded again. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "record/notice_rate.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_write("rate/notified.json", data, size);
    char *dir = xstrndup(path, strlen(path) - strlen("/notified.json"));
    char err[512];
    struct notice_rate r = {0}, again = {0};
    notice_rate_load(&r, dir, err, sizeof(err));
    for (size_t i = 0; i < r.count; i++)
        FUZZ_CHECK(r.items[i].uid != 0 && r.items[i].time > 0 &&
                   r.items[i].kind < NOTICE_KIND_COUNT);

    FUZZ_CHECK(notice_rate_save(&r, dir, err, sizeof(err)) == 0);
    FUZZ_CHECK(notice_rate_load(&again, dir, err, sizeof(err)) == 0);
    FUZZ_CHECK(again.count == r.count);
    for (size_t i = 0; i < r.count; i++)
        FUZZ_CHECK(again.items[i].uid == r.items[i].uid && again.items[i].kind == r.items[i].kind &&
                   again.items[i].time == r.items[i].time);
    notice_rate_free(&again);
    notice_rate_free(&r);
    unlink(path);
    free(dir);
    free(path);
    return 0;
}
