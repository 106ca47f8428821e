/* rules.d/NAME.rules, then processes classified with the parsed rules
 * through both ways the daemon judges them: rules_classify on a whole
 * identity, and a shared program entry (programs.c) whose exe and argv
 * parts are judged once, with the comm part per process.  The two must
 * pick the same rule.
 *
 * Input: the rules file, then optionally a NUL and pieces separated by
 * NULs, taken three at a time as a process's exe, comm and argv (its
 * words separated by the byte 0x01, since NUL separates the pieces). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "observe/procfs.h"
#include "programs.h"
#include "rules.h"
#include "util.h"

struct proc {
    const char *exe, *comm;
    const char *argv; /* NUL-separated, argv_len bytes */
    size_t argv_len;
};

/* Programs of a login node, the shipped rules' own cases among them. */
#define ARGV(s) s, sizeof(s) - 1
static const struct proc known[] = {
    {"/usr/sbin/sshd", "sshd", ARGV("sshd: alice@pts/0")},
    {"/usr/bin/python3.11", "python3", ARGV("python3\0train.py\0--epochs\0""100")},
    {"/usr/bin/mpirun", "mpirun", ARGV("mpirun\0-np\0""64\0./a.out")},
    {"/home/alice/xmrig", "xmrig", ARGV("./xmrig\0-o\0pool.example:3333")},
    {"/usr/bin/bash", "bash", ARGV("-bash")},
    {"/usr/bin/vim", "vim", ARGV("vim\0notes.txt")},
    {"/usr/sbin/sshd (deleted)", "sshd", ARGV("sshd: bob")},
    {NULL, "renamed", NULL, 0},
};

static void classify(const struct rule_set *rules, struct program_table *table,
                     const struct proc *p)
{
    char *cmdline = NULL;
    if (p->argv) {
        cmdline = xmalloc(p->argv_len + 1);
        for (size_t i = 0; i < p->argv_len; i++)
            cmdline[i] = p->argv[i] ? p->argv[i] : ' ';
        cmdline[p->argv_len] = '\0';
    }
    /* The path as the program entry gives it to the rules. */
    char *exe = p->exe ? xstrdup(p->exe) : NULL;
    size_t n = exe ? strlen(exe) : 0;
    if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
        exe[n - 10] = '\0';
    char comm[COMM_LEN];
    copy_string(comm, sizeof(comm), p->comm);

    struct proc_identity id = {exe, comm, cmdline};
    const struct rule *whole = rules_classify(rules, &id);

    char digest[65];
    sha256_hex(p->argv ? p->argv : "", p->argv_len, digest);
    struct program_facts f = {.exe = p->exe, .exe_trusted = true, .argv = p->argv,
                              .argv_len = p->argv_len, .argv_total = p->argv_len,
                              .argv_sha256 = digest};
    const struct program *prog = programs_get(table, rules, &f);
    const struct rule *parts = programs_classify(rules, prog, comm);
    FUZZ_CHECK(whole == parts);

    /* From another mount namespace, a path alone matches nothing a rule
     * names by exe, and no exempt rule (they all need one). */
    f.exe_trusted = false;
    const struct program *foreign = programs_get(table, rules, &f);
    const struct rule *r = programs_classify(rules, foreign, comm);
    FUZZ_CHECK(!r || !r->exe);
    programs_put(table, foreign);
    programs_put(table, prog);
    free(exe);
    free(cmdline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t rules_len = nul ? (size_t)(nul - data) : size;
    char *path = fuzz_write("fuzz.rules", data, rules_len);
    struct rule_set rules = {0};
    struct errors errs = {0};
    rules_load_file(&rules, path, &errs);
    for (size_t i = 0; i < errs.count; i++)
        FUZZ_CHECK(strncmp(errs.messages[i], path, strlen(path)) == 0);

    struct program_table table = {0};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        classify(&rules, &table, &known[i]);
    struct fuzz_pieces in = {nul ? nul + 1 : data + size, data + size};
    char *exe, *comm, *argv;
    size_t len;
    while (fuzz_next_piece(&in, &exe, &len)) {
        if (!fuzz_next_piece(&in, &comm, &len))
            comm = xstrdup("");
        if (!fuzz_next_piece(&in, &argv, &len)) {
            argv = xstrdup("");
            len = 0;
        }
        for (size_t i = 0; i < len; i++)
            if (argv[i] == '\1')
                argv[i] = '\0';
        struct proc p = {exe, comm, argv, len};
        classify(&rules, &table, &p);
        free(exe);
        free(comm);
        free(argv);
    }
    FUZZ_CHECK(table.count == 0);
    programs_free(&table);
    rules_free(&rules);
    errors_free(&errs);
    free(path);
    return 0;
}
