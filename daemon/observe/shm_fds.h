/* Shared memory a process holds only through its descriptors: a memfd,
 * or a tmpfs file unlinked since it was opened.  No name is left for the
 * walk of tmpfs to find (shm_held.h), and a process that has unmapped it
 * shows none of it in its resident size, yet it stays in RAM as long as
 * a descriptor is open.  Read by the argv_reader's helper (a request of
 * kind ARGV_SHM_FDS), never by the daemon itself.
 *
 * A user's descriptor may name a file of a FUSE filesystem they run,
 * whose server need never answer, so nothing here asks a filesystem
 * other than tmpfs anything:
 *  - readlink of /proc/PID/fd/N only builds a path from the kernel's
 *    cache; only a link that ends in " (deleted)" (every memfd does) or
 *    that cannot be read whole goes on;
 *  - /proc/PID/fdinfo/N names the file's mount (mnt_id), from the kernel
 *    too; only a mount on the list of shared-memory mounts goes on: the
 *    kernel's own (where memfds live, learnt from a memfd of the
 *    helper's own) and the tmpfs mounts of PID 1's namespace;
 *  - then statx through the link with AT_STATX_DONT_SYNC, which asks
 *    tmpfs (it never waits on a user) and would not make even FUSE ask
 *    its server should the user have put another file at N meanwhile;
 *    its device must be that mount's, and it must have no name left
 *    (nlink 0): a file that still has one is the walk's.
 * And all of it runs in the helper, which is killed when it stalls.
 *
 * One answer covers at most `budget` descriptors from `from` on and at
 * most SHM_FDS_OBJECTS objects (each counted once however many of the
 * process's descriptors hold it); next_fd says where the next request
 * goes on, -1 when the process has no more. */
#ifndef LOGINGUARD_SHM_FDS_H
#define LOGINGUARD_SHM_FDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SHM_FDS_OBJECTS 128

struct shm_fd_object {
    uint64_t dev, ino;
    uint64_t bytes;     /* allocated to it, in RAM or swap (st_blocks) */
};

/* What goes back to the daemon, with its objects (count of them). */
struct shm_fds_reply {
    int32_t next_fd;    /* -1: the process has no more descriptors */
    uint32_t looked;    /* descriptors looked at */
    uint32_t count;
    uint32_t zero;
    struct shm_fd_object objects[SHM_FDS_OBJECTS];
};

#define SHM_FDS_REPLY_SIZE(n) (offsetof(struct shm_fds_reply, objects) + \
                               (size_t)(n) * sizeof(struct shm_fd_object))

/* The shared-memory mounts: id and device.  Read again when a second
 * has passed since the last reading (mounts come and go rarely). */
struct shm_mount {
    int id;
    dev_t dev;
};

struct shm_mounts {
    struct shm_mount *list;
    size_t count, capacity;
    uint64_t read_at;   /* boottime usec, 0: never */
};

void shm_mounts_refresh(struct shm_mounts *m, int proc_fd);
void shm_mounts_free(struct shm_mounts *m);

/* The objects the process whose /proc directory is dir holds through
 * descriptors from `from` on, at most budget of them looked at.  0, or
 * -1 when its descriptors cannot be listed (it is gone). */
int shm_fds_read(int dir, const struct shm_mounts *m, int from, uint32_t budget,
                 struct shm_fds_reply *out);

#endif
