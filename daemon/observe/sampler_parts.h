/* The sampler's parts (sampler.h is what others see): the functions and
 * limits its files share.  One file a section: sampler.c (the table of
 * known processes, set-up), sampler_read.c (one process: its stat, place
 * and usage), sampler_program.c (what it runs: the judge, command lines,
 * code checks), sampler_news.c (exits, the proc connector's news),
 * sampler_snapshot.c (a sample), sampler_sweep.c (the full sweep). */
#ifndef LOGINGUARD_SAMPLER_PARTS_H
#define LOGINGUARD_SAMPLER_PARTS_H

#include "observe/sampler.h"

#define STAT_BUF 1024
#define CGROUP_BUF 4096
/* A sample waits this long for the command lines it asked for, so that
 * a program judged by its argv is judged at this sample; a reader stuck
 * on a hostile process costs no more. */
#define ARGV_WAIT_USEC (20 * 1000)

/* sampler.c */
uint32_t *owner_checks_of(struct sampler *s, uid_t owner);
void forget_proc(struct sampler *s, struct tracked_proc *t);
void free_proc(struct sampler *s, struct tracked_proc *t);
uint32_t *owner_held_of(struct sampler *s, uid_t owner);
void insert_proc(struct sampler *s, struct tracked_proc *t);
struct tracked_proc *lookup_proc(const struct sampler *s, pid_t pid);
void prune_procs(struct sampler *s, uint32_t generation);
void release_descriptor(struct sampler *s, struct tracked_proc *t);
/* sampler_read.c */
struct tracked_proc *discover_proc(struct sampler *s, pid_t pid, uint64_t now, uint64_t interval);
pid_t first_proc_pid(struct sampler *s);
pid_t next_proc_pid(struct sampler *s);
int open_proc_dir(const struct sampler *s, pid_t pid);
bool read_own_stat(const struct sampler *s, const struct tracked_proc *t, struct proc_stat *st);
void read_proc_place(struct sampler *s, struct tracked_proc *t, int dirfd);
int read_proc_runtime(const struct tracked_proc *t, uint64_t *runtime);
int refresh_proc(struct sampler *s, struct tracked_proc *t, uint64_t now, uint64_t interval);
void remember_new_proc(struct sampler *s, const struct tracked_proc *t);
int reread_program(struct sampler *s, struct tracked_proc *t);
bool same_proc_owner(const struct sampler *s, const struct tracked_proc *t);
bool proc_still_ignored(const struct sampler *s, const struct tracked_proc *t, uint64_t now);
struct tracked_proc *visit_proc(struct sampler *s, pid_t pid, uint64_t now, uint64_t interval);
/* sampler_program.c */
void ask_code_check(struct sampler *s, struct tracked_proc *t);
void judge_proc(struct sampler *s, struct tracked_proc *t);
void exe_identity(const struct sampler *s, int dirfd, struct program_facts *f);
void poll_argv_answers(struct sampler *s, uint64_t wait_usec);
char *read_exe(int dirfd);
void read_program(struct sampler *s, struct tracked_proc *t, int dirfd);
void argv_stalled(struct sampler *s, struct tracked_proc *t);
bool owner_withheld(const struct sampler *s, uid_t owner);
void withhold_owner(struct sampler *s, uid_t owner);
/* sampler_news.c */
void apply_marks(struct sampler *s, uint64_t now, uint64_t interval);
/* sampler_snapshot.c */
void fill_proc_sample(const struct sampler *s, struct proc_sample *ps, const struct tracked_proc *t);
bool proc_followed(const struct sampler *s, const struct tracked_proc *t);
bool proc_watched(const struct sampler *s, const struct tracked_proc *t);
/* sampler_sweep.c */
void walk_descriptors_on(struct sampler *s);

#endif
