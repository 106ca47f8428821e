/* The [cluster] keys checked: the connection string may hold no password
 * (loginguard.conf is readable by every user; libpq's passfile keeps it,
 * root's alone), the passfile it names must be root's and mode 0600, and
 * a node's name is 1 to 63 characters of [A-Za-z0-9._-] (the host name
 * when not set). */
#ifndef LOGINGUARD_CLUSTER_CONFIG_H
#define LOGINGUARD_CLUSTER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#define CLUSTER_NODE_NAME_MAX 63

/* 0, or -1 with why when conninfo (key = value words or a postgresql://
 * URI) gives a password. */
int cluster_database_check(const char *conninfo, char *why, size_t len);

/* The value of key in conninfo (key = value words, or a URI's query
 * parameter) into buf; false when absent (or longer than buf). */
bool cluster_conninfo_value(const char *conninfo, const char *key, char *buf, size_t len);

/* 0, or -1 with why when path is not a regular file owned by root and
 * mode 0600 (or cannot be looked at). */
int cluster_passfile_check(const char *path, char *why, size_t len);

/* 0, or -1 with why when node is not a valid node name. */
int cluster_node_check(const char *node, char *why, size_t len);

/* This node's name: [cluster] node, else the host name; -1 with why when
 * the host name is no valid node name (set node then). */
int cluster_node_name(const struct policy *p, char *buf, size_t len, char *why, size_t why_len);

#endif
