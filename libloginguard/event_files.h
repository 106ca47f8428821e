/* The event log and what logrotate made of it: the file itself and its
 * rotated copies in the same directory, FILE.1 ... FILE.N, each of them
 * perhaps compressed (FILE.N.gz, read with zlib). */
#ifndef LOGINGUARD_EVENT_FILES_H
#define LOGINGUARD_EVENT_FILES_H

#include <stdint.h>
#include <stddef.h>

#include "event_lines.h"

struct event_files {
    char **paths; /* oldest first; the log itself last */
    size_t count;
};

/* The rotated copies of path last written at or after since (realtime
 * usec; a copy last written before it holds nothing newer), oldest
 * first, then path itself (whether it exists or not). */
void event_files_list(const char *path, uint64_t since, struct event_files *out);
void event_files_free(struct event_files *files);

/* Every line of one file, plain or gzip-compressed, to fn; a last line
 * without its '\n' is left held in lines.  0, or -1 with errno (the file
 * cannot be opened, or reading it failed: EIO for a broken .gz). */
int event_file_read(const char *path, struct event_lines *lines, event_line_fn *fn, void *arg);

#endif
