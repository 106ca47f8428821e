/* The cgroup files the sampler parses: cpu.stat and memory.stat ("key
 * value" lines), /proc/PID/cgroup (is a process inside its owner's
 * cgroup, on v1 and v2?), and the names of per-user cgroups. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "observe/cgroup_counters.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const char *const keys[] = {"usage_usec", "anon", "file_mapped", "total_rss",
                                       "total_mapped_file", "u"};
    uint64_t value;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        counters_stat_value(text, size, keys[i], &value);

    static const struct {
        int version;
        const char *path;
    } layouts[] = {{2, "/user.slice"}, {2, "/"}, {1, "/user.slice"}, {1, "/loginguard"}};
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        struct user_counters c = {.version = layouts[i].version,
                                  .cgroup_path = (char *)layouts[i].path};
        counters_holds(&c, text, size, 1000);
        counters_holds(&c, text, size, 0);
    }

    uid_t uid;
    char *name = xstrndup(text, size);
    if (counters_parse_name(name, &uid) == 0)
        FUZZ_CHECK(uid != (uid_t)-1 && strncmp(name, "user-", 5) == 0);
    free(name);
    return 0;
}
