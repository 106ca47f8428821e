/* The cluster's schema as SQL (cluster_schema.h says what each table is
 * for).  A migration never changes once released: a new version is a new
 * entry, so that a database made by any earlier loginguardctl reaches the
 * same schema as a fresh one. */
#include "config.h"

#include "cluster_schema.h"

const char *const cluster_migrations[CLUSTER_SCHEMA_VERSION] = {
    /* 0 -> 1: everything.  The schema may exist already (an admin made it
     * to own it with the right role); the tables may not: half a schema
     * is an error to see, not to paper over. */
    "CREATE SCHEMA IF NOT EXISTS loginguard;\n"
    "CREATE TABLE loginguard.meta (\n"
    "    key text PRIMARY KEY,\n"
    "    value text NOT NULL);\n"
    "CREATE TABLE loginguard.nodes (\n"
    "    node text PRIMARY KEY,\n"
    "    stored_seq bigint NOT NULL DEFAULT 0,\n"
    "    first_seen timestamptz NOT NULL DEFAULT now(),\n"
    "    last_seen timestamptz NOT NULL DEFAULT now());\n"
    "CREATE SEQUENCE loginguard.rev;\n"
    "CREATE TABLE loginguard.standing (\n"
    "    uid bigint PRIMARY KEY,\n"
    "    rev bigint NOT NULL,\n"
    "    level int NOT NULL,\n"
    "    since bigint, until bigint, quiet_since bigint, last_violation bigint,\n"
    "    violations bigint NOT NULL,\n"
    "    exempt_until bigint,\n"
    "    last_reason text, last_cpu double precision,\n"
    "    last_memory bigint, last_window bigint,\n"
    "    node text NOT NULL,\n"
    "    seq bigint NOT NULL);\n"
    "CREATE TABLE loginguard.changes (\n"
    "    rev bigint PRIMARY KEY,\n"
    "    node text NOT NULL,\n"
    "    seq bigint NOT NULL,\n"
    "    UNIQUE (node, seq),\n"
    "    uid bigint NOT NULL,\n"
    "    kind text NOT NULL,\n"
    "    base_rev bigint NOT NULL,\n"
    "    after_seq bigint NOT NULL,\n"
    "    applied boolean NOT NULL,\n"
    "    at timestamptz NOT NULL,\n"
    "    by_name text,\n"
    "    level int, since bigint, until bigint, quiet_since bigint,\n"
    "    last_violation bigint, violations bigint, exempt_until bigint,\n"
    "    last_reason text, last_cpu double precision,\n"
    "    last_memory bigint, last_window bigint);\n"
    "CREATE INDEX changes_uid_rev ON loginguard.changes (uid, rev);\n"
    "CREATE TABLE loginguard.events (\n"
    "    node text NOT NULL,\n"
    "    seq bigint NOT NULL,\n"
    "    PRIMARY KEY (node, seq),\n"
    "    at timestamptz NOT NULL,\n"
    "    name text NOT NULL,\n"
    "    uid bigint,\n"
    "    event jsonb NOT NULL);\n"
    "CREATE INDEX events_at ON loginguard.events (at);\n"
    "INSERT INTO loginguard.meta (key, value) VALUES ('schema_version', '1')\n"
    "    ON CONFLICT (key) DO UPDATE SET value = excluded.value;\n",
};

/* Each %s stands for the quoted role (loginguardctl replaces them all: a
 * printf format would need the name once a statement). */
const char cluster_grant_format[] =
    "GRANT USAGE ON SCHEMA loginguard TO %s;\n"
    "GRANT SELECT, INSERT, UPDATE ON loginguard.nodes, loginguard.standing,\n"
    "    loginguard.changes, loginguard.events TO %s;\n"
    "GRANT SELECT ON loginguard.meta TO %s;\n"
    "GRANT USAGE, UPDATE ON SEQUENCE loginguard.rev TO %s;\n";
