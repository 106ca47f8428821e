/* loginguard.conf as an admin writes it: sections, keys, values with
 * units, lists; then the checks over the whole policy.  Parsed from
 * memory, so no drop-in, rule or template is read from disk. */
#include "config.h"

#include <string.h>

#include "configfile.h"
#include "fuzz.h"

#define NAME "fuzz.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct policy p;
    struct errors errs = {0};
    policy_init_defaults(&p);
    int rc = config_parse_text(NAME, (const char *)data, size, &p, &errs);
    FUZZ_CHECK((rc == 0) == (errs.count == 0));
    config_validate(&p, NAME, &errs);
    /* Every message names the file, so the admin knows where to look. */
    for (size_t i = 0; i < errs.count; i++)
        FUZZ_CHECK(strncmp(errs.messages[i], NAME ":", strlen(NAME ":")) == 0);
    FUZZ_CHECK(p.level_count <= MAX_LEVELS);
    FUZZ_CHECK(p.channels.count <= MAX_NAMES && p.exempt_users.count <= MAX_NAMES);
    errors_free(&errs);
    policy_free(&p);
    return 0;
}
