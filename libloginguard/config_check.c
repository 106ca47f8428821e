#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_check.h"
#include "config_dump.h"
#include "configfile.h"

static void print_errors(const struct errors *errs, FILE *err)
{
    for (size_t i = 0; i < errs->count; i++)
        fprintf(err, "%s\n", errs->messages[i]);
}

static int check_only(const struct config_check_args *a, FILE *out, FILE *err)
{
    struct policy p;
    struct errors errs = {0};
    int rc = config_load(a->path, a->must_exist, &p, &errs);
    print_errors(&errs, err);
    errors_free(&errs);
    if (rc < 0) {
        fprintf(err, "%s: the configuration has errors (above); nothing was changed\n", a->path);
        return 1;
    }
    if (a->force_observe)
        p.mode = MODE_OBSERVE;
    fprintf(out, "%s: OK (%s mode, %zu levels, %zu rules)\n", a->path, mode_name(p.mode),
            p.level_count, p.rules.count);
    policy_free(&p);
    return 0;
}

/* The errors as check_only prints them, or else the policy. */
static int dump(const struct config_check_args *a, FILE *out, FILE *err)
{
    struct policy p;
    struct config_origins origins;
    struct errors errs = {0};
    int rc = config_load_traced(a->path, a->must_exist, &p, &origins, &errs);
    print_errors(&errs, err);
    errors_free(&errs);
    if (rc < 0) {
        fprintf(err, "%s: the configuration has errors (above); nothing to dump\n", a->path);
    } else {
        if (a->force_observe) {
            struct config_origin *mode =
                &origins.keys[config_key_find("daemon", "mode") - config_keys];
            free(mode->file);
            *mode = (struct config_origin){.note = "the --observe option"};
            p.mode = MODE_OBSERVE;
        }
        config_dump(out, &p, &origins);
        policy_free(&p);
        if (fflush(out) != 0 || ferror(out)) {
            fprintf(err, "writing the dump: %s\n", strerror(errno));
            rc = -1;
        }
    }
    config_origins_free(&origins);
    return rc < 0 ? 1 : 0;
}

int config_check(const struct config_check_args *a, FILE *out, FILE *err)
{
    return a->dump ? dump(a, out, err) : check_only(a, out, err);
}
