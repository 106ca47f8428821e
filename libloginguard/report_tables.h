/* The report's tables as cells of text, the same for every format that
 * shows tables (text, CSV, HTML): which tables there are, their columns
 * and what goes in each.  Cells hold the text as the log gave it: each
 * format escapes it its own way. */
#ifndef LOGINGUARD_REPORT_TABLES_H
#define LOGINGUARD_REPORT_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

enum report_table_id { REPORT_USERS, REPORT_PROGRAMS, REPORT_RULES, REPORT_DAYS, REPORT_RETURNS,
                       REPORT_TABLES };

struct report_column {
    const char *heading;   /* "TIME LIMITED" */
    const char *key;       /* "limited" (CSV's heading, JSON's key) */
    bool number;           /* right-aligned */
};

struct report_table {
    const char *name;      /* "users", as --table names it */
    const char *title;     /* "Users by violations" */
    const struct report_column *columns;
    size_t cols;
    char **cells;          /* rows * cols, row by row */
    size_t rows;
};

/* The table's name for --table, or -1. */
int report_table_by_name(const char *name);
extern const char *const report_table_names[REPORT_TABLES];

/* Every table.  raw: the forms a program reads (seconds, UTC times in
 * ISO 8601) instead of those for people ("1h30m", local times). */
void report_tables(const struct report *r, bool raw, struct report_table t[REPORT_TABLES]);
void report_tables_free(struct report_table t[REPORT_TABLES]);

/* "2026-11-25 10:00" local, or with raw "2026-11-25T09:00:00Z". */
void report_time(uint64_t usec, bool raw, char *buf, size_t len);

#endif
