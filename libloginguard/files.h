/* Opening the files an admin gives us, with errors that name them. */
#ifndef LOGINGUARD_FILES_H
#define LOGINGUARD_FILES_H

#include <stdio.h>

#include "errors.h"

struct file_list {
    char **paths;
    size_t count;
};

/* fopen for reading, refusing anything but a regular file; on failure
 * adds an error naming the path and returns NULL. */
FILE *open_config_file(const char *path, struct errors *errs);

/* Regular files whose names end in suffix, from a stack of directories:
 * a name found in an earlier directory hides the same name in later ones
 * (the site's /etc directory comes before the shipped one, so a site file
 * replaces the shipped file of the same name, and an empty one disables
 * it).  Sorted by file name; names starting with '.' are skipped (editor
 * leftovers).  A missing directory is empty, not an error. */
int list_dir_files(char *const *dirs, size_t dir_count, const char *suffix,
                   struct file_list *out, struct errors *errs);
void file_list_free(struct file_list *list);

#endif
