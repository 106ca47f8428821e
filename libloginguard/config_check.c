#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_check.h"
#include "config_dump.h"
#include "configfile.h"
#include "utf8.h"
#include "util.h"

/* Errors quote the files (a broken line, a path): shown so that a byte
 * in them cannot act on the terminal. */
static void print_errors(const struct errors *errs, FILE *err)
{
    for (size_t i = 0; i < errs->count; i++) {
        size_t len = strlen(errs->messages[i]);
        char *out = xmalloc(4 * len + 1);
        utf8_escape(errs->messages[i], len, out, 4 * len + 1);
        fprintf(err, "%s\n", out);
        free(out);
    }
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

/* Text from files (paths, pieces of a broken line) as a JSON string that
 * is valid UTF-8 and shows every control byte as \xNN. */
static json_t *shown(const char *s)
{
    size_t len = strlen(s);
    char *out = xmalloc(4 * len + 1);
    utf8_escape(s, len, out, 4 * len + 1);
    json_t *j = json_string(out);
    free(out);
    return j;
}

json_t *config_check_json(const struct config_check_args *a)
{
    struct policy p;
    struct errors errs = {0};
    int rc = config_load(a->path, a->must_exist, &p, &errs);
    json_t *list = json_array();
    for (size_t i = 0; i < errs.count; i++)
        json_array_append_new(list, shown(errs.messages[i]));
    errors_free(&errs);
    json_t *o = json_pack("{s:o, s:b, s:o}", "file", shown(a->path), "ok", rc == 0, "errors",
                          list);
    if (rc == 0) {
        json_object_set_new(o, "mode", json_string(mode_name(a->force_observe ? MODE_OBSERVE
                                                                              : p.mode)));
        json_object_set_new(o, "levels", json_integer((json_int_t)p.level_count));
        json_object_set_new(o, "rules", json_integer((json_int_t)p.rules.count));
        policy_free(&p);
    }
    return o;
}
