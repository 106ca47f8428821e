/* An NSS module that stands for a user directory that has stopped
 * answering (an LDAP server gone quiet, SSSD waiting on it): while the
 * file named by $LG_NSS_STALL exists, every lookup that reaches it waits
 * (at most 120 s, a hang guard); then it knows no one.
 *
 * A test puts "lgstall" after "files" in an nsswitch.conf that it binds
 * over /etc/nsswitch.conf in the daemon's own mount namespace, and puts
 * this library where the daemon's LD_LIBRARY_PATH finds it as
 * libnss_lgstall.so.2.  Users in /etc/passwd are still found by
 * "files"; a uid no file knows, and every user's group list (each
 * module is asked for it), reach this one. */
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static void stall(void)
{
    const char *path = getenv("LG_NSS_STALL");
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; path && i < 12000 && access(path, F_OK) == 0; i++)
        nanosleep(&tick, NULL);
}

enum nss_status _nss_lgstall_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len,
                                        int *err);
enum nss_status _nss_lgstall_getpwnam_r(const char *name, struct passwd *pw, char *buf,
                                        size_t len, int *err);
enum nss_status _nss_lgstall_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t len,
                                        int *err);
enum nss_status _nss_lgstall_getgrnam_r(const char *name, struct group *gr, char *buf,
                                        size_t len, int *err);
enum nss_status _nss_lgstall_initgroups_dyn(const char *user, gid_t group, long *start,
                                            long *size, gid_t **groups, long limit, int *err);

enum nss_status _nss_lgstall_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len,
                                        int *err)
{
    (void)uid, (void)pw, (void)buf, (void)len, (void)err;
    stall();
    return NSS_STATUS_NOTFOUND;
}

enum nss_status _nss_lgstall_getpwnam_r(const char *name, struct passwd *pw, char *buf,
                                        size_t len, int *err)
{
    (void)name, (void)pw, (void)buf, (void)len, (void)err;
    stall();
    return NSS_STATUS_NOTFOUND;
}

enum nss_status _nss_lgstall_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t len,
                                        int *err)
{
    (void)gid, (void)gr, (void)buf, (void)len, (void)err;
    stall();
    return NSS_STATUS_NOTFOUND;
}

enum nss_status _nss_lgstall_getgrnam_r(const char *name, struct group *gr, char *buf,
                                        size_t len, int *err)
{
    (void)name, (void)gr, (void)buf, (void)len, (void)err;
    stall();
    return NSS_STATUS_NOTFOUND;
}

enum nss_status _nss_lgstall_initgroups_dyn(const char *user, gid_t group, long *start,
                                            long *size, gid_t **groups, long limit, int *err)
{
    (void)user, (void)group, (void)start, (void)size, (void)groups, (void)limit, (void)err;
    stall();
    return NSS_STATUS_NOTFOUND;
}
