/* The link's loop (link_loop.c): the daemon's records into the cluster's
 * database and its standings back, over the link's end of the socketpair,
 * until the daemon's end closes. */
#ifndef LOGINGUARD_LINK_LOOP_H
#define LOGINGUARD_LINK_LOOP_H

struct link_settings {
    const char *database; /* [cluster] database: a libpq connection string */
    const char *passfile; /* the password file to use instead of the one it names, or NULL */
    const char *node;     /* this node's name */
};

/* Returns the program's exit status. */
int link_loop(const struct link_settings *s, int fd);

#endif
