/* The records this node has for the cluster's database and that the
 * database has not stored yet, kept in state_dir so that a crash, a
 * restart or a database down for days loses none of them.
 *
 * DIR/cluster-queue.jsonl holds one record a line, each the very JSON
 * object of the link's "record" message (cluster_link.h), in seq order.
 * A change (raise, lower, forgive, exempt) is appended and fsynced before
 * the daemon acts on it further, as state.json is written before limits
 * are set; an event is appended without a sync of its own (the next
 * change's, or the next cluster_queue_sync, takes it along), as the event
 * log is.  A line cut short by a crash is cut off at load: what it
 * carried was never acted on.
 *
 * DIR/cluster-seq.json, {"seq": N}, keeps the last seq given while the
 * queue is empty: seq numbers survive restarts (the database keeps
 * (node, seq) unique; a number given twice would be taken as stored).
 *
 * Records the link says are stored are dropped: the file is cut to
 * nothing when none is left, and rewritten atomically (as state.json)
 * when most of it is stored.  Past `limit` bytes, events are no longer
 * queued (they are counted; the caller says so once) while changes still
 * are: a penalty must reach the other nodes, a line of the log need not.
 *
 * Files are opened without following symlinks, must be regular files of
 * ours that no one else can write, and are made mode 0600. */
#ifndef LOGINGUARD_CLUSTER_QUEUE_H
#define LOGINGUARD_CLUSTER_QUEUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLUSTER_QUEUE_FILE "cluster-queue.jsonl"
#define CLUSTER_SEQ_FILE "cluster-seq.json"
#define CLUSTER_QUEUE_LIMIT (64u << 20)

/* A record's uid when it has none (an event of the daemon's own). */
#define CLUSTER_NO_UID ((uid_t)-1)

struct cluster_record {
    uint64_t seq;
    uid_t uid;
    bool change;         /* a change of a user's standing, not an event */
    char *text;          /* the JSON object, one line, no newline */
    size_t len;
};

struct cluster_queue {
    char *dir;
    int fd;                      /* the queue file, O_APPEND; -1 when not open */
    struct cluster_record *items;
    size_t count, capacity;
    uint64_t last_seq;           /* the last seq given */
    uint64_t bytes;              /* of the file, as it should be */
    uint64_t stored_bytes;       /* of records stored since the file was last rewritten */
    uint64_t limit;              /* bytes; events past it are refused */
    uint64_t refused;            /* events refused since the queue was last below its limit */
    uint64_t refused_total;
    bool dirty;                  /* appended since the last sync */
    bool broken;                 /* a write failed: the file is rewritten whole at the next sync */
};

/* Open DIR's queue (made if missing) and load what it holds; limit in
 * bytes (0: CLUSTER_QUEUE_LIMIT).  *skipped counts lines that were not
 * records (kept out, and out of the file at its next rewrite).  0, or -1
 * with err naming the file and the fix (the queue is then empty, kept in
 * memory only, and every write is tried again). */
int cluster_queue_open(struct cluster_queue *q, const char *dir, uint64_t limit,
                       size_t *skipped, char *err, size_t err_len);
void cluster_queue_close(struct cluster_queue *q);

/* Give record (a JSON object: its "seq" is set here) the next seq and
 * append it to the file (not synced).  change: a change of uid's standing
 * (always queued); else an event, refused past the limit.  Returns the
 * seq; 0 when refused (*first_refusal says whether it is the first since
 * the queue was last below its limit).  A write that fails keeps the
 * record in memory; cluster_queue_sync then writes the whole queue again
 * (and says why it cannot). */
uint64_t cluster_queue_add(struct cluster_queue *q, json_t *record, bool change, uid_t uid,
                           bool *first_refusal);

/* On disk: what was appended since the last sync (fdatasync), or after a
 * failed write the whole queue again.  0, or -1 with err. */
int cluster_queue_sync(struct cluster_queue *q, char *err, size_t err_len);

/* The database holds every record up to seq: drop them (and compact the
 * file).  A seq beyond any given (the state directory was wiped, the
 * database kept the node's records) moves the numbering past it. */
int cluster_queue_stored(struct cluster_queue *q, uint64_t seq, char *err, size_t err_len);

/* The first record after seq, or NULL. */
const struct cluster_record *cluster_queue_after(const struct cluster_queue *q, uint64_t seq);

/* The seq of uid's last change in the queue, 0 if none. */
uint64_t cluster_queue_last_change(const struct cluster_queue *q, uid_t uid);

#endif
