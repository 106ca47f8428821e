/* The cluster's partitions as Slurm tells them: the text of
 * `scontrol show partition --oneliner`, one partition per line of
 * Key=Value words (Slurm 22.05 and later print the same keys; a key
 * this does not know is passed over).  Pure: the daemon asks Slurm in a
 * child (observe/slurm_query.c) and hands the text here. */
#ifndef LOGINGUARD_SLURM_PARTITIONS_H
#define LOGINGUARD_SLURM_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is read at most: a cluster has tens of partitions, not thousands. */
#define SLURM_TEXT_MAX (1u << 20)
#define SLURM_PARTITIONS_MAX 1024
#define SLURM_NAMES_MAX 256     /* groups or accounts named by one partition */

/* A list of names from Slurm; count 0 with all set means Slurm said ALL. */
struct slurm_names {
    char **names;
    size_t count;
    bool all;
};

struct slurm_partition {
    char *name;
    bool up;                   /* State=UP (not DOWN, DRAIN or INACTIVE) */
    bool is_default;           /* Default=YES */
    bool hidden;               /* Hidden=YES */
    bool root_only;            /* RootOnly=YES */
    char *qos;                 /* QoS=, NULL for N/A */
    uint64_t max_time;         /* seconds; 0: UNLIMITED */
    uint64_t default_time;     /* seconds; 0: NONE */
    unsigned max_cpus_per_node;   /* 0: UNLIMITED */
    uint64_t max_mem_per_node;    /* bytes; 0: UNLIMITED */
    struct slurm_names allow_groups, allow_accounts, deny_accounts;
};

struct slurm_partitions {
    struct slurm_partition *items;
    size_t count;
};

/* Parse text (len bytes, not NUL-terminated).  On error returns -1 with
 * err naming the line and what was wrong, and out empty; a line without
 * PartitionName= is an error (Slurm printed something else). */
int slurm_partitions_parse(const char *text, size_t len, struct slurm_partitions *out,
                           char *err, size_t err_len);
void slurm_partitions_free(struct slurm_partitions *p);
const struct slurm_partition *slurm_partition_find(const struct slurm_partitions *p,
                                                   const char *name);

/* Slurm's time as seconds: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
 * D-HH:MM:SS; "UNLIMITED", "INFINITE" and "NONE" are 0.  Returns -1 on
 * anything else, -2 on a time of that form over 365 days. */
int slurm_time_parse(const char *s, uint64_t *seconds);
/* Seconds as Slurm's --time: "HH:MM:SS" under a day, else "D-HH:MM:SS". */
void slurm_time_format(uint64_t seconds, char *out, size_t len);

#endif
