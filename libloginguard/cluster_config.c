#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_config.h"

/* libpq's two forms of a connection string. */
static bool is_uri(const char *s)
{
    return strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0;
}

/* One keyword = value pair of the keyword form, from *s on: the value
 * unquoted (up to a blank) or in single quotes, with backslash escapes
 * in both, as libpq reads them.  false at the end or on a broken pair. */
static bool next_pair(const char **s, char *key, size_t key_len, char *val, size_t val_len)
{
    const char *p = *s;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return false;
    size_t k = 0;
    while (*p && *p != '=' && !isspace((unsigned char)*p)) {
        if (k + 1 < key_len)
            key[k++] = (char)tolower((unsigned char)*p);
        p++;
    }
    key[k] = '\0';
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '=')
        return false;
    p++;
    while (isspace((unsigned char)*p))
        p++;
    size_t v = 0;
    bool quoted = *p == '\'';
    if (quoted)
        p++;
    while (*p && (quoted ? *p != '\'' : !isspace((unsigned char)*p))) {
        if (*p == '\\' && p[1])
            p++;
        if (v + 1 < val_len)
            val[v++] = *p;
        p++;
    }
    if (quoted && *p == '\'')
        p++;
    val[v] = '\0';
    *s = p;
    return true;
}

static int hex(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? tolower(c) - 'a' + 10
                                                                               : -1;
}

/* A URI's query parameter key, percent-decoded into val. */
static bool uri_param(const char *uri, const char *key, char *val, size_t len)
{
    const char *q = strchr(uri, '?');
    size_t klen = strlen(key);
    while (q) {
        q++;
        if (strncasecmp(q, key, klen) == 0 && q[klen] == '=') {
            const char *p = q + klen + 1;
            size_t v = 0;
            for (; *p && *p != '&'; p++) {
                char c = *p;
                if (c == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
                    c = (char)(hex(p[1]) * 16 + hex(p[2]));
                    p += 2;
                }
                if (v + 1 >= len)
                    return false;
                val[v++] = c;
            }
            val[v] = '\0';
            return true;
        }
        q = strchr(q, '&');
    }
    return false;
}

bool cluster_conninfo_value(const char *conninfo, const char *key, char *buf, size_t len)
{
    if (!conninfo || len == 0)
        return false;
    if (is_uri(conninfo))
        return uri_param(conninfo, key, buf, len);
    char k[64], v[4096];
    const char *s = conninfo;
    bool found = false;
    while (next_pair(&s, k, sizeof(k), v, sizeof(v)))
        if (strcmp(k, key) == 0 && strlen(v) < len) {
            snprintf(buf, len, "%s", v);
            found = true; /* libpq takes the last */
        }
    return found;
}

/* postgresql://user:secret@host/...: a password in the URI's user part. */
static bool uri_userinfo_password(const char *uri)
{
    const char *start = strstr(uri, "://") + 3;
    size_t authority = strcspn(start, "/?");
    const char *at = memchr(start, '@', authority);
    return at && memchr(start, ':', (size_t)(at - start));
}

int cluster_database_check(const char *conninfo, char *why, size_t len)
{
    char value[4096];
    bool given = is_uri(conninfo)
                     ? uri_userinfo_password(conninfo) ||
                           uri_param(conninfo, "password", value, sizeof(value))
                     : cluster_conninfo_value(conninfo, "password", value, sizeof(value));
    if (!given)
        return 0;
    snprintf(why, len, "[cluster] database must not hold a password (loginguard.conf is "
             "readable by every user); put it in a passfile owned by root, mode 0600, and name "
             "it: passfile=/etc/loginguard/pgpass");
    return -1;
}

int cluster_passfile_check(const char *path, char *why, size_t len)
{
    struct stat sb;
    if (lstat(path, &sb) < 0) {
        snprintf(why, len, "[cluster] database: passfile %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_uid != 0 || (sb.st_mode & 07777) != 0600) {
        snprintf(why, len, "[cluster] database: passfile %s must be a regular file owned by "
                 "root, mode 0600 (it is %s, owner uid %u, mode %04o); chown root %s; chmod "
                 "0600 %s", path, S_ISREG(sb.st_mode) ? "a regular file" : "not a regular file",
                 (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777), path, path);
        return -1;
    }
    return 0;
}

int cluster_node_check(const char *node, char *why, size_t len)
{
    size_t n = strlen(node);
    size_t ok = strspn(node, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (n >= 1 && n <= CLUSTER_NODE_NAME_MAX && ok == n)
        return 0;
    snprintf(why, len, "[cluster] node '%s' must be 1 to %d characters of letters, digits, "
             "'.', '_' and '-'", node, CLUSTER_NODE_NAME_MAX);
    return -1;
}

int cluster_node_name(const struct policy *p, char *buf, size_t len, char *why, size_t why_len)
{
    if (p->cluster_node) {
        snprintf(buf, len, "%s", p->cluster_node);
        return cluster_node_check(buf, why, why_len);
    }
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) < 0) {
        snprintf(why, why_len, "[cluster] node is not set and the host name cannot be read "
                 "(%s); set node", strerror(errno));
        return -1;
    }
    snprintf(buf, len, "%s", host);
    if (cluster_node_check(host, why, why_len) == 0 && strlen(buf) == strlen(host))
        return 0;
    snprintf(why, why_len, "[cluster] node is not set and the host name '%s' is no valid node "
             "name (1 to %d characters of letters, digits, '.', '_' and '-'); set node",
             host, CLUSTER_NODE_NAME_MAX);
    return -1;
}
