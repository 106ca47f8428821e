/* loginguardd --check-config --dump: the policy in effect written as a
 * loginguard.conf (every key, in the parser's order and units, read back
 * to the very same policy), then, as '#' comments, where each value came
 * from and which rule files and notice templates are in effect. */
#ifndef LOGINGUARD_CONFIG_DUMP_H
#define LOGINGUARD_CONFIG_DUMP_H

#include <stdio.h>

#include "configfile.h"
#include "policy.h"

void config_dump(FILE *out, const struct policy *p, const struct config_origins *o);

/* Only the settings, without a comment and without reading a directory. */
void config_dump_settings(FILE *out, const struct policy *p);

#endif
