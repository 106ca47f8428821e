/* loginguardctl cluster init [--grant ROLE]: creates or migrates the
 * schema the cluster's login nodes share (cluster_schema.h) in the
 * [cluster] database of the configuration, and grants a node's role its
 * rights. */
#ifndef LOGINGUARDCTL_CLUSTER_CMD_H
#define LOGINGUARDCTL_CLUSTER_CMD_H

struct cluster_args {
    const char *config;      /* NULL: the default configuration */
    const char *grant;       /* --grant ROLE, or NULL */
};

/* argc, argv: what follows "cluster"; returns the exit status
 * (loginguardctl(1)). */
int cluster_command(int argc, char **argv, const struct cluster_args *a);

#endif
