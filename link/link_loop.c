/* The link's loop: the daemon's records into the cluster's database,
 * the database's standings back to the daemon (cluster_link_packets.h
 * says the packets).  It blocks on nothing but poll and libpq calls that end by
 * their own deadlines (link_db.c). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster_codec.h"
#include "cluster_link_packets.h"
#include "link_db.h"
#include "link_loop.h"
#include "util.h"

#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 30000
#define SYNC_ROWS_MAX 10000000 /* rows of one "up"'s sync: a server sending more lies */

enum link_state {
    LINK_GOING, /* on with the next packet */
    LINK_EXIT,  /* the daemon's end closed */
    LINK_DOWN,  /* the database failed: reconnect */
};

struct link {
    const struct link_settings *s;
    int fd;
    struct link_db db;
    char *packet;      /* CLUSTER_PACKET_MAX + 1 bytes */
};

/* ------------------------------------------------------------ packets */

/* false when the daemon's end is gone. */
static bool send_json(struct link *l, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return true; /* out of memory: the packet is lost, the link goes on */
    size_t len = strlen(text);
    ssize_t w;
    do
        w = send(l->fd, text, len, MSG_NOSIGNAL | MSG_EOR);
    while (w < 0 && errno == EINTR);
    free(text);
    if (w < 0 && errno == EMSGSIZE)
        return true;
    return w >= 0;
}

static bool send_up(struct link *l)
{
    return send_json(l, json_pack("{s:s, s:I}", "t", "up", "stored", (json_int_t)l->db.stored_seq));
}

static bool send_stored(struct link *l)
{
    return send_json(l, json_pack("{s:s, s:I}", "t", "stored", "seq", (json_int_t)l->db.stored_seq));
}

static bool send_down(struct link *l)
{
    return send_json(l, json_pack("{s:s, s:s}", "t", "down", "error", l->db.error));
}

/* One packet from the daemon into l->packet: its length, 0 when the
 * daemon's end closed, -1 when nothing is there (or it was too big). */
static ssize_t recv_packet(struct link *l)
{
    ssize_t n;
    do
        n = recv(l->fd, l->packet, CLUSTER_PACKET_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EAGAIN ? -1 : 0;
    if (n > CLUSTER_PACKET_MAX) {
        fprintf(stderr, "loginguard-link: a packet of %zd bytes from the daemon, above "
                "%d: dropped\n", n, CLUSTER_PACKET_MAX);
        return -1;
    }
    l->packet[n] = '\0';
    return n;
}

/* ------------------------------------------------------------ records */

static enum link_state after_store(struct link *l, enum link_db_result r)
{
    if (r == LINK_DB_DOWN)
        return LINK_DOWN;
    return send_stored(l) ? LINK_GOING : LINK_EXIT;
}

static enum link_state store_change(struct link *l, const json_t *o)
{
    struct standing_change c;
    uint64_t at;
    char by[CLUSTER_BY_MAX], why[256];
    if (change_from_json(o, &c, &at, by, sizeof(by), why, sizeof(why)) < 0) {
        uint64_t seq = (uint64_t)json_integer_value(json_object_get(o, "seq"));
        fprintf(stderr, "loginguard-link: record %" PRIu64 " from the daemon is not "
                "one (%s): skipped\n", seq, why);
        return after_store(l, link_db_skip(&l->db, seq));
    }
    snprintf(c.node, sizeof(c.node), "%s", l->s->node);
    struct shared_standing row;
    bool have_row = false;
    enum link_db_result r = link_db_store_change(&l->db, &c, at, by, &row, &have_row);
    enum link_state st = after_store(l, r);
    if (st == LINK_GOING && r == LINK_DB_OK && have_row && !send_json(l, standing_to_json(&row)))
        return LINK_EXIT;
    return st;
}

static enum link_state store_event(struct link *l, const json_t *o, uint64_t seq)
{
    const json_t *e = json_object_get(o, "event");
    const char *name = json_string_value(json_object_get(e, "event"));
    const json_t *uid = json_object_get(e, "uid");
    char *text = json_is_object(e) ? json_dumps(e, JSON_COMPACT) : NULL;
    if (!text || !name) {
        free(text);
        fprintf(stderr, "loginguard-link: event record %" PRIu64 " has no event with "
                "a name: skipped\n", seq);
        return after_store(l, link_db_skip(&l->db, seq));
    }
    int64_t u = json_is_integer(uid) && json_integer_value(uid) >= 0 ? json_integer_value(uid) : -1;
    enum link_db_result r = link_db_store_event(&l->db, seq, text, name,
                                                json_string_value(json_object_get(e, "time")), u);
    free(text);
    return after_store(l, r);
}

static enum link_state handle_packet(struct link *l)
{
    json_error_t err;
    json_t *o = json_loads(l->packet, JSON_REJECT_DUPLICATES, &err);
    const char *t = json_string_value(json_object_get(o, "t"));
    const json_t *seq = json_object_get(o, "seq");
    enum link_state st = LINK_GOING;
    if (!t || strcmp(t, "record") != 0 || !json_is_integer(seq) || json_integer_value(seq) <= 0) {
        fprintf(stderr, "loginguard-link: a packet from the daemon that is no record: "
                "ignored\n");
    } else if ((uint64_t)json_integer_value(seq) <= l->db.stored_seq) {
        st = send_stored(l) ? LINK_GOING : LINK_EXIT; /* stored already */
    } else if (strcmp(json_string_value(json_object_get(o, "kind")) ?: "", "event") == 0) {
        st = store_event(l, o, (uint64_t)json_integer_value(seq));
    } else {
        st = store_change(l, o);
    }
    json_decref(o);
    return st;
}

/* ------------------------------------------------------------ standings */

static enum link_state send_rows(struct link *l, const struct shared_standing *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!send_json(l, standing_to_json(&rows[i])))
            return LINK_EXIT;
    return LINK_GOING;
}

/* Every row, in rev order, a batch at a time. */
static enum link_state send_all_rows(struct link *l)
{
    struct shared_standing *rows = xcalloc(LINK_DB_BATCH, sizeof(*rows));
    uint64_t after = 0;
    enum link_state st = LINK_GOING;
    for (size_t total = 0; st == LINK_GOING && total < SYNC_ROWS_MAX;) {
        size_t n;
        uint64_t last;
        if (link_db_rows_after(&l->db, after, rows, &n, &last) != LINK_DB_OK) {
            st = LINK_DOWN;
            break;
        }
        st = send_rows(l, rows, n);
        if (last <= after)
            break;
        after = last;
        total += LINK_DB_BATCH;
    }
    free(rows);
    return st;
}

#define NOTIFY_ROUND (4 * LINK_DB_BATCH) /* then the daemon's packets get their turn */

/* The rows that the notifications waiting name (at most NOTIFY_ROUND of
 * them; *more when some are left).  By the revs notified, not "rev > the
 * last sent": a rev is taken before its transaction commits, so a
 * smaller one may commit after a larger one was read. */
static enum link_state send_notified(struct link *l, bool *more)
{
    uint64_t revs[LINK_DB_BATCH];
    struct shared_standing *rows = xcalloc(LINK_DB_BATCH, sizeof(*rows));
    size_t n = 0, taken = 0;
    bool bad = false, resync = false, left = false;
    enum link_state st = LINK_GOING;
    uint64_t rev;
    while (st == LINK_GOING && !(left = taken == NOTIFY_ROUND) &&
           link_db_next_notify(&l->db, &rev, &bad)) {
        taken++;
        if (bad)
            resync = true;
        else
            revs[n++] = rev;
        if (n == LINK_DB_BATCH) {
            size_t got;
            st = link_db_rows_at(&l->db, revs, n, rows, &got) != LINK_DB_OK
                     ? LINK_DOWN
                     : send_rows(l, rows, got);
            n = 0;
        }
    }
    if (st == LINK_GOING && n) {
        size_t got;
        st = link_db_rows_at(&l->db, revs, n, rows, &got) != LINK_DB_OK ? LINK_DOWN
                                                                         : send_rows(l, rows, got);
    }
    free(rows);
    /* A query reads what the server sent meanwhile, notifications too,
     * into libpq's own queue, where poll cannot see them: after one, look
     * again before waiting. */
    *more = left || taken > 0;
    /* A payload that is no rev (not one of ours): everything again. */
    return st == LINK_GOING && resync ? send_all_rows(l) : st;
}

/* ------------------------------------------------------------ the loops */

/* Connected: "up", every row, then records and notifications until the
 * database fails or the daemon goes. */
static enum link_state run_connected(struct link *l)
{
    if (!send_up(l))
        return LINK_EXIT;
    enum link_state st = send_all_rows(l);
    while (st == LINK_GOING) {
        bool more;
        st = send_notified(l, &more);
        if (st != LINK_GOING)
            break;
        struct pollfd p[2] = {{.fd = l->fd, .events = POLLIN},
                              {.fd = PQsocket(l->db.conn), .events = POLLIN}};
        if (poll(p, 2, more ? 0 : -1) < 0) {
            if (errno != EINTR)
                return LINK_EXIT;
            continue;
        }
        if (p[1].revents && link_db_consume(&l->db) != LINK_DB_OK)
            return LINK_DOWN;
        if (p[0].revents & POLLIN) {
            ssize_t n = recv_packet(l);
            if (n == 0)
                return LINK_EXIT;
            if (n > 0)
                st = handle_packet(l);
        } else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            return LINK_EXIT;
        }
    }
    return st;
}

/* Down: wait ms before the next try, reading (and dropping: the daemon
 * sends them again after "up") what the daemon sends.  false when the
 * daemon's end closed. */
static bool wait_down(struct link *l, int ms)
{
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    for (int left = ms; left > 0;) {
        int r = poll(&p, 1, left > 1000 ? 1000 : left);
        if (r < 0 && errno != EINTR)
            return false;
        if (r > 0 && (p.revents & POLLIN)) {
            if (recv_packet(l) == 0)
                return false;
            continue;
        }
        if (r > 0)
            return false; /* POLLHUP without data */
        left -= left > 1000 ? 1000 : left;
    }
    return true;
}

int link_loop(const struct link_settings *s, int fd)
{
    signal(SIGPIPE, SIG_IGN);
    struct link l = {.s = s, .fd = fd, .packet = xmalloc(CLUSTER_PACKET_MAX + 1)};
    int retry = RETRY_FIRST_MS;
    char last_down[sizeof(l.db.error)] = "";
    /* Rows name their node in at most CLUSTER_NODE_MAX - 1 bytes: a longer
     * name could never be read back, so the link never connects with it. */
    bool node_ok = s->node && *s->node && strlen(s->node) < CLUSTER_NODE_MAX;
    if (!node_ok)
        snprintf(l.db.error, sizeof(l.db.error), "node in [cluster] must be a name of 1 to %d "
                 "bytes (the host name by default)", CLUSTER_NODE_MAX - 1);
    for (;;) {
        enum link_state st = LINK_DOWN;
        if (node_ok && link_db_connect(&l.db, s->database, s->passfile, s->node) == LINK_DB_OK) {
            retry = RETRY_FIRST_MS;
            last_down[0] = '\0';
            st = run_connected(&l);
            link_db_close(&l.db);
        }
        if (st == LINK_EXIT)
            break;
        /* Each new error said once, not each retry's. */
        if (strcmp(last_down, l.db.error) != 0) {
            snprintf(last_down, sizeof(last_down), "%s", l.db.error);
            if (!send_down(&l))
                break;
        }
        if (!wait_down(&l, retry))
            break;
        retry = retry * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : retry * 2;
    }
    link_db_close(&l.db);
    free(l.db.password);
    free(l.packet);
    return 0;
}
