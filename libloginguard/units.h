/* Parsing of the values an admin writes in loginguard.conf: durations,
 * sizes, CPU amounts, booleans.  Each parser returns 0 on success or -1
 * with a one-line explanation (what is wrong and how to write it) in
 * `why`, quoting `shown` (the line as the admin wrote it, e.g.
 * "cpu = 2 cors"); the config parser prefixes file and line. */
#ifndef LOGINGUARD_UNITS_H
#define LOGINGUARD_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USEC_PER_SEC 1000000ULL

int parse_duration(const char *text, const char *shown,
                  uint64_t *usec, char *why, size_t why_len);
int parse_size(const char *text, const char *shown,
                  uint64_t *bytes, char *why, size_t why_len);
int parse_cores(const char *text, const char *shown,
                  double *cores, char *why, size_t why_len);
int parse_bool(const char *text, const char *shown,
                  bool *value, char *why, size_t why_len);
int parse_count(const char *text, const char *shown,
                  uint64_t *value, char *why, size_t why_len);

/* Human forms used in events and messages: "5m", "1h30m", "4.0G". */
void format_duration(uint64_t usec, char *buf, size_t len);
void format_size(uint64_t bytes, char *buf, size_t len);

/* Forms that parse_duration, parse_size and parse_cores read back to the
 * very same value, in the largest unit that holds it whole: "90s", "5m",
 * "4G", "1.5 cores".  A buffer of UNITS_EXACT_LEN holds any of them. */
#define UNITS_EXACT_LEN 400
void format_duration_exact(uint64_t usec, char *buf, size_t len);
void format_size_exact(uint64_t bytes, char *buf, size_t len);
void format_cores_exact(double cores, char *buf, size_t len);

#endif
