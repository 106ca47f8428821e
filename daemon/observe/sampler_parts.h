/* The sampler's parts (sampler.h is what others see): the functions and
 * limits its files share.  One file a section, each calling only the
 * ones listed before it: sampler.c (the table of known processes, set-up),
 * sampler_program.c (what a process runs: the judge, command lines, code
 * checks, the walks over descriptors), sampler_jobs.c (whether a process
 * is a Slurm job's), sampler_read.c (one process: its stat, place and
 * usage), sampler_news.c (exits, the proc connector's
 * news), sampler_sweep.c (the full sweep), sampler_snapshot.c (a sample,
 * and a process as a snapshot entry). */
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
void forget_proc(struct sampler *s, struct tracked_proc *t);
void free_proc(struct sampler *s, struct tracked_proc *t);
void insert_proc(struct sampler *s, struct tracked_proc *t);
struct tracked_proc *lookup_proc(const struct sampler *s, pid_t pid);
int open_proc_dir(const struct sampler *s, pid_t pid);
uint32_t *owner_checks_of(struct sampler *s, uid_t owner);
uint32_t *owner_held_of(struct sampler *s, uid_t owner);
void prune_procs(struct sampler *s, uint32_t generation);
void release_descriptor(struct sampler *s, struct tracked_proc *t);
/* sampler_program.c */
void argv_stalled(struct sampler *s, struct tracked_proc *t);
void ask_code_check(struct sampler *s, struct tracked_proc *t);
void exe_identity(const struct sampler *s, int dirfd, struct program_facts *f);
void judge_proc(struct sampler *s, struct tracked_proc *t);
bool owner_withheld(const struct sampler *s, uid_t owner);
void poll_argv_answers(struct sampler *s, uint64_t wait_usec);
bool proc_followed(const struct sampler *s, const struct tracked_proc *t);
char *read_exe(int dirfd);
void read_program(struct sampler *s, struct tracked_proc *t, int dirfd);
void walk_descriptors_on(struct sampler *s);
void withhold_owner(struct sampler *s, uid_t owner);
/* sampler_jobs.c */
void count_jobs(struct sampler *s);
void place_job(struct sampler *s, struct tracked_proc *t, const char *cgroup, size_t len,
               bool look);
void recheck_job(struct sampler *s, struct tracked_proc *t);
void settle_jobs(struct sampler *s);
/* sampler_read.c */
struct tracked_proc *discover_proc(struct sampler *s, pid_t pid, uint64_t now, uint64_t interval);
pid_t first_proc_pid(struct sampler *s);
pid_t next_proc_pid(struct sampler *s);
bool proc_still_ignored(const struct sampler *s, const struct tracked_proc *t, uint64_t now);
bool read_own_stat(const struct sampler *s, const struct tracked_proc *t, struct proc_stat *st);
void read_proc_place(struct sampler *s, struct tracked_proc *t, int dirfd, bool look);
int read_proc_runtime(const struct tracked_proc *t, uint64_t *runtime);
int refresh_proc(struct sampler *s, struct tracked_proc *t, uint64_t now, uint64_t interval);
void remember_new_proc(struct sampler *s, const struct tracked_proc *t);
int reread_program(struct sampler *s, struct tracked_proc *t);
bool same_proc_owner(const struct sampler *s, const struct tracked_proc *t);
struct tracked_proc *visit_proc(struct sampler *s, pid_t pid, uint64_t now, uint64_t interval);
/* sampler_news.c */
void apply_marks(struct sampler *s, uint64_t now, uint64_t interval);
/* sampler_snapshot.c */
void fill_proc_sample(const struct sampler *s, struct proc_sample *ps, const struct tracked_proc *t);
bool proc_watched(const struct sampler *s, const struct tracked_proc *t);

#endif
