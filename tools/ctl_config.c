#include "config.h"

#include <stdio.h>

#include "configfile.h"
#include "ctl_config.h"
#include "errors.h"

int ctl_load_policy(const char *config, const char *what, const char *hint, struct policy *p)
{
    struct errors errs = {0};
    const char *path = config ? config : CTL_DEFAULT_CONFIG;
    int rc = config_load(path, config != NULL, p, &errs);
    if (rc < 0) {
        for (size_t i = 0; i < errs.count; i++)
            fprintf(stderr, "%s\n", errs.messages[i]);
        fprintf(stderr, "loginguardctl: cannot read %s from %s%s\n", what, path, hint ? hint : "");
    }
    errors_free(&errs);
    return rc < 0 ? -1 : 0;
}
