/* Files root keeps in a directory that is not necessarily safe from
 * users (state.json, the notices kept for the next login): written
 * atomically, read only when they are regular files root alone can
 * change, never through a symbolic link.
 *
 * The directory itself is taken as the admin named it (it may well be a
 * symlink to another disk); only the files in it are opened without
 * following symlinks, each relative to a descriptor of the directory so
 * the checks and the use are on the same directory. */
#ifndef LOGINGUARD_SAFEFILE_H
#define LOGINGUARD_SAFEFILE_H

#include <stddef.h>

/* text and a final newline into DIR/NAME: NAME.tmp is removed if present,
 * created (O_EXCL, O_NOFOLLOW, mode 0600), written, fsynced and renamed
 * over NAME, then the directory is fsynced, so that after a crash NAME is
 * the old file or the new one, whole.  Returns 0, or -1 with err naming
 * the file and what to do (NAME is then as it was). */
int safe_write_file(int dirfd, const char *dir, const char *name, const char *text, char *err,
                    size_t err_len);

/* The len bytes of text as DIR/NAME for others to read (mode 0644), made
 * and renamed over NAME as above but not synced: a reader sees the old
 * file or the new one, whole; after a power cut it may be empty.  For
 * files that are written again soon anyway (metrics). */
int safe_publish_file(int dirfd, const char *dir, const char *name, const char *text,
                      size_t len, char *err, size_t err_len);

/* DIR/NAME, whole, if it is a regular file owned by us and writable by
 * no one else, into *text (NUL-terminated, to be freed) and *len.
 * Returns 0; -2 if absent; 1 if larger than max (not read); -1 with err
 * (unreadable, a symlink, someone else's). */
int safe_read_file(int dirfd, const char *dir, const char *name, size_t max, char **text,
                   size_t *len, char *err, size_t err_len);

#endif
