/* Regular expressions for rules' "argv" patterns, matched against
 * command lines that users write: the matcher must take time linear in
 * the text whatever the pattern and the text (glibc's regexec is
 * quadratic on crafted input for patterns as plain as "train[^ /]*\.py"),
 * and a pattern must not explode when compiled.  RE2 guarantees both:
 * it never backtracks, and it compiles within a memory budget, refusing
 * a pattern that needs more.  This is its C face (regex_linear.cc). */
#ifndef LOGINGUARD_REGEX_LINEAR_H
#define LOGINGUARD_REGEX_LINEAR_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lg_regex;

/* Compile pattern (POSIX extended syntax, as egrep reads it, plus \d \s
 * \w and \b; see loginguard.conf(5)); NULL with err filled when it is
 * not valid or needs more than the memory budget. */
struct lg_regex *lg_regex_compile(const char *pattern, char *err, size_t err_len);

/* Whether the pattern matches anywhere in text (len bytes, any bytes). */
bool lg_regex_search(const struct lg_regex *re, const char *text, size_t len);

void lg_regex_free(struct lg_regex *re);

#ifdef __cplusplus
}
#endif

#endif
