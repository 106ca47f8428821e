/* The keys loginguard.conf knows: one table, read by the parser and by
 * --check-config --dump, so that the dump always shows every key the
 * parser accepts, in the same order and spelling. */
#ifndef LOGINGUARD_CONFIG_KEYS_H
#define LOGINGUARD_CONFIG_KEYS_H

#include <stddef.h>

enum value_type {
    T_DURATION, T_SIZE, T_CORES, T_COUNT, T_UID, T_BOOL, T_STRING, T_PATH, T_LIST,
    T_MODE, T_BACKEND, T_SLURM, T_NAME,
    T_FILE,  /* an absolute path, or empty for none */
};

struct config_key {
    const char *section;   /* "level" stands for every [level N] */
    const char *name;
    enum value_type type;
    size_t offset;         /* into struct policy, or struct level for "level" */
    size_t size;           /* for T_NAME: the buffer size */
};

/* In the order of the sections in loginguard.conf, ended by a NULL name. */
extern const struct config_key config_keys[];
#define CONFIG_KEY_COUNT 55

/* The key of that name in section ("level" for [level N]), or NULL. */
const struct config_key *config_key_find(const char *section, const char *name);

/* The key's field in p, or in level for a "level" key. */
void *config_key_field(const struct config_key *k, void *p, void *level);

#endif
