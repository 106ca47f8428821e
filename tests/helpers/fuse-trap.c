/* fuse-trap MOUNTPOINT: a FUSE filesystem that stands in for /proc for
 * the command line reader's tests, with two processes:
 *   1/stat, 1/cmdline   process 1, whose command line is never answered:
 *                       a read of it waits as long as this server lives
 *   2/stat, 2/cmdline   process 2, an ordinary one ("ok")
 * (both started at tick 4242), and
 *   "held (deleted)"    a file whose attributes are never answered
 *                       (the cache of them lasts no time), named as an
 *                       unlinked file's descriptor reads.  This is how a read of a process's memory
 * can hang on a kernel that lets it: a FUSE server that never answers.
 * Current kernels read /proc/PID/cmdline from anonymous memory only and
 * let go of the mmap lock while a fault waits, so a process cannot do
 * this to its own command line there; the reader is built for the
 * kernels and the ways that remain, and tested here on a real read that
 * does not end.  Run as root in the foreground; killing it aborts the
 * reads that wait on it. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define STAT_LINE "%d (fake) S 0 %d %d 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 4242 1 1\n"

struct node {
    fuse_ino_t ino, parent;
    const char *name;
    bool dir;
};

static const struct node nodes[] = {
    {2, FUSE_ROOT_ID, "1", true},  {3, 2, "stat", false}, {4, 2, "cmdline", false},
    {5, FUSE_ROOT_ID, "2", true},  {6, 5, "stat", false}, {7, 5, "cmdline", false},
    {8, FUSE_ROOT_ID, "held (deleted)", false},
};
#define HELD 8
#define NODES (sizeof(nodes) / sizeof(nodes[0]))

static const struct node *find(fuse_ino_t ino)
{
    for (size_t i = 0; i < NODES; i++)
        if (nodes[i].ino == ino)
            return &nodes[i];
    return NULL;
}

static void fill(fuse_ino_t ino, struct stat *st)
{
    const struct node *n = find(ino);
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = !n || n->dir ? S_IFDIR | 0555 : S_IFREG | 0444;
    st->st_nlink = 1;
}

static void on_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    for (size_t i = 0; i < NODES; i++) {
        if (nodes[i].parent == parent && strcmp(nodes[i].name, name) == 0) {
            struct fuse_entry_param e;
            memset(&e, 0, sizeof(e));
            e.ino = nodes[i].ino;
            e.attr_timeout = e.entry_timeout = 3600;
            if (e.ino == HELD)
                e.attr_timeout = 0; /* each stat asks, and is never answered */
            fill(e.ino, &e.attr);
            fuse_reply_entry(req, &e);
            return;
        }
    }
    fuse_reply_err(req, ENOENT);
}

static void on_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    if (ino == HELD) {
        fprintf(stderr, "fuse-trap: a getattr is held\n");
        return;
    }
    struct stat st;
    fill(ino, &st);
    fuse_reply_attr(req, &st, 3600);
}

static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    const struct node *n = find(ino);
    if (!n || n->dir) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    fi->direct_io = 1; /* every read comes here */
    fuse_reply_open(req, fi);
}

static void reply_text(fuse_req_t req, const char *text, size_t len, size_t size, off_t off)
{
    if ((size_t)off >= len)
        fuse_reply_buf(req, NULL, 0);
    else
        fuse_reply_buf(req, text + off, len - (size_t)off < size ? len - (size_t)off : size);
}

static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)fi;
    char text[256];
    switch (ino) {
    case 3:
    case 6: {
        int pid = ino == 3 ? 1 : 2;
        int n = snprintf(text, sizeof(text), STAT_LINE, pid, pid, pid);
        reply_text(req, text, (size_t)n, size, off);
        break;
    }
    case 7:
        reply_text(req, "ok", 3, size, off);
        break;
    default:
        /* 1/cmdline: taken, never answered. */
        fprintf(stderr, "fuse-trap: a read is held\n");
        break;
    }
}

static const struct fuse_lowlevel_ops ops = {
    .lookup = on_lookup,
    .getattr = on_getattr,
    .open = on_open,
    .read = on_read,
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuse-trap MOUNTPOINT\n");
        return 2;
    }
    char *fargv[] = {argv[0], NULL};
    struct fuse_args args = FUSE_ARGS_INIT(1, fargv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
    if (!se || fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, argv[1]) != 0) {
        fprintf(stderr, "fuse-trap: cannot mount %s\n", argv[1]);
        return 1;
    }
    fprintf(stderr, "fuse-trap: mounted\n");
    int rc = fuse_session_loop(se);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return rc ? 1 : 0;
}
