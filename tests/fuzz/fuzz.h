/* What every fuzz target shares.  A target is one function that libFuzzer
 * (make fuzz, built with clang) calls with generated inputs, and that the
 * replay driver (make check, any compiler, under the sanitizers of the
 * build) calls with every file of the target's corpus.  A target must be
 * deterministic, free all it allocates, and touch nothing outside the
 * private directory fuzz_dir() gives it. */
#ifndef LOGINGUARD_FUZZ_H
#define LOGINGUARD_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test broke: say which and abort, so that
 * libFuzzer keeps the input and the replay fails. */
#define FUZZ_CHECK(cond)                                                                    \
    do {                                                                                    \
        if (!(cond))                                                                        \
            fuzz_fail(__FILE__, __LINE__, #cond);                                           \
    } while (0)

void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* A private directory, made at the first call and removed at exit. */
const char *fuzz_dir(void);

/* data written to fuzz_dir()/name (subdirectories made as needed);
 * returns the path, to be freed. */
char *fuzz_write(const char *name, const void *data, size_t size);

/* Input split at NUL bytes: the next piece (not NUL-terminated in the
 * input) as a new string in *piece, or 0 when the input is used up. */
struct fuzz_pieces {
    const uint8_t *at, *end;
};
int fuzz_next_piece(struct fuzz_pieces *p, char **piece, size_t *len);

#endif
