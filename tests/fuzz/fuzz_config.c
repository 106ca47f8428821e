/* loginguard.conf as an admin writes it: sections, keys, values with
 * units, lists; then the checks over the whole policy.  Parsed from
 * memory, so no drop-in, rule or template is read from disk. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_dump.h"
#include "configfile.h"
#include "fuzz.h"

#define NAME "fuzz.conf"

static char *settings_text(const struct policy *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    FUZZ_CHECK(f != NULL);
    config_dump_settings(f, p);
    FUZZ_CHECK(fclose(f) == 0);
    return text;
}

/* A valid policy's dump reads back to the same policy: dumped again, it
 * gives the same text (each value's form is one of its own). */
static void check_dump_reads_back(const struct policy *p)
{
    char *text = settings_text(p);
    struct policy again;
    struct errors errs = {0};
    policy_init_defaults(&again);
    FUZZ_CHECK(config_parse_text("dump", text, strlen(text), &again, &errs) == 0);
    char *text_again = settings_text(&again);
    FUZZ_CHECK(strcmp(text, text_again) == 0);
    free(text);
    free(text_again);
    errors_free(&errs);
    policy_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct policy p;
    struct errors errs = {0};
    policy_init_defaults(&p);
    int rc = config_parse_text(NAME, (const char *)data, size, &p, &errs);
    FUZZ_CHECK((rc == 0) == (errs.count == 0));
    if (config_validate(&p, NAME, &errs) == 0 && rc == 0)
        check_dump_reads_back(&p);
    /* Every message names the file, so the admin knows where to look. */
    for (size_t i = 0; i < errs.count; i++)
        FUZZ_CHECK(strncmp(errs.messages[i], NAME ":", strlen(NAME ":")) == 0);
    FUZZ_CHECK(p.level_count <= MAX_LEVELS);
    FUZZ_CHECK(p.channels.count <= MAX_NAMES && p.exempt_users.count <= MAX_NAMES);
    errors_free(&errs);
    policy_free(&p);
    return 0;
}
