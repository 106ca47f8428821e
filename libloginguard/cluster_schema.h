/* The PostgreSQL schema a cluster of login nodes shares, created and
 * migrated by `loginguardctl cluster init` (one transaction a version;
 * loginguard.meta's schema_version says which ones are in).
 *
 * Version 1, everything in the schema "loginguard":
 *
 *   meta(key text primary key, value text not null)
 *       ('schema_version', '1')
 *   nodes(node text primary key,
 *         stored_seq bigint not null default 0,  -- the node's records stored, in order
 *         first_seen timestamptz not null default now(),
 *         last_seen timestamptz not null default now())
 *   sequence rev                                  -- standing revisions, cluster-wide
 *   standing(uid bigint primary key, rev bigint not null,
 *            level int not null, since bigint, until bigint,
 *            quiet_since bigint, last_violation bigint,
 *            violations bigint not null, exempt_until bigint,
 *            last_reason text, last_cpu double precision,
 *            last_memory bigint, last_window bigint,
 *            node text not null, seq bigint not null)  -- who made rev
 *   changes(rev bigint primary key,               -- the row's rev it made (or
 *                                                 -- nextval for a dropped one)
 *           node text not null, seq bigint not null, unique (node, seq),
 *           uid bigint not null, kind text not null, -- raise lower forgive exempt
 *           base_rev bigint not null, after_seq bigint not null,
 *           applied boolean not null,             -- false: stale, dropped
 *           at timestamptz not null,              -- when the node made it
 *           by_name text,                         -- the admin of a forgive/exempt
 *           level int, since bigint, until bigint, quiet_since bigint,
 *           last_violation bigint, violations bigint, exempt_until bigint,
 *           last_reason text, last_cpu double precision,
 *           last_memory bigint, last_window bigint)
 *       index (uid, rev)
 *   events(node text not null, seq bigint not null, primary key (node, seq),
 *          at timestamptz not null, name text not null, uid bigint,
 *          event jsonb not null)                  -- the event as the node logged it
 *       index (at)
 *
 * Times in standing and changes are microseconds since the epoch (UTC),
 * as in state.json; 0 = none.  A node's records (changes and events)
 * share its seq numbering: nodes.stored_seq moves in the same
 * transaction that stores a record, so each is stored exactly once.
 *
 * After every stored change a transaction runs
 * NOTIFY loginguard_standing, '<rev>'.
 *
 * Rights: the role a node connects as needs USAGE on the schema,
 * SELECT, INSERT, UPDATE on nodes, standing, changes, events, SELECT on
 * meta, USAGE and UPDATE on the sequence; `cluster init --grant ROLE`
 * grants exactly that.  Only the role that runs init owns anything. */
#ifndef LOGINGUARD_CLUSTER_SCHEMA_H
#define LOGINGUARD_CLUSTER_SCHEMA_H

#define CLUSTER_SCHEMA_VERSION 1
#define CLUSTER_NOTIFY_CHANNEL "loginguard_standing"

/* The SQL that takes the schema from version i to i+1, for i from 0
 * (nothing) to CLUSTER_SCHEMA_VERSION - 1.  Each ends by setting
 * meta's schema_version. */
extern const char *const cluster_migrations[CLUSTER_SCHEMA_VERSION];

/* GRANT statements for a node's role; %s is the quoted role name. */
extern const char cluster_grant_format[];

#endif
