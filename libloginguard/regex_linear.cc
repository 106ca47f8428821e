// The C face of RE2 (regex_linear.h).
#include "config.h"

#include <stdio.h>

#include <new>

#include <re2/re2.h>

#include "regex_linear.h"

struct lg_regex {
    RE2 re;
    explicit lg_regex(const char *pattern, const RE2::Options &options) : re(pattern, options) {}
};

// Memory a compiled pattern may take (RE2 splits it between its forward
// and backward programs and their DFAs).  Every shipped pattern needs a
// fraction of this; a pattern that needs more is an error at load, not
// a stall at match time.
static const int64_t MAX_MEM = 4 << 20;

struct lg_regex *lg_regex_compile(const char *pattern, char *err, size_t err_len)
{
    RE2::Options options;
    // POSIX egrep syntax, as the rules were written for, with the Perl
    // classes a rule author reaches for (\d \s \w) and \b.
    options.set_posix_syntax(true);
    options.set_perl_classes(true);
    options.set_word_boundary(true);
    // A command line may hold any bytes: each byte is one character.
    options.set_encoding(RE2::Options::EncodingLatin1);
    options.set_never_capture(true);
    options.set_log_errors(false);
    options.set_max_mem(MAX_MEM);
    lg_regex *re = new (std::nothrow) lg_regex(pattern, options);
    if (!re) {
        snprintf(err, err_len, "out of memory");
        return nullptr;
    }
    if (re->re.ok())
        return re;
    if (re->re.error_code() == RE2::ErrorPatternTooLarge)
        snprintf(err, err_len, "the pattern is too large (it would need more than %lld KiB to "
                 "match in linear time); simplify its repetitions",
                 (long long)(MAX_MEM >> 10));
    else
        snprintf(err, err_len, "%s", re->re.error().c_str());
    delete re;
    return nullptr;
}

bool lg_regex_search(const struct lg_regex *re, const char *text, size_t len)
{
    return RE2::PartialMatch(re2::StringPiece(text, len), re->re);
}

void lg_regex_free(struct lg_regex *re)
{
    delete re;
}
