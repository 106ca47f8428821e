#include "config.h"

#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/become_user.h"

bool become_user(const char *name, uid_t uid, gid_t gid, pid_t parent)
{
    if (initgroups(name, gid) != 0 || setresgid(gid, gid, gid) != 0 ||
        setresuid(uid, uid, uid) != 0)
        return false;
    uid_t r, e, s;
    gid_t rg, eg, sg;
    if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid ||
        getresgid(&rg, &eg, &sg) != 0 || rg != gid || eg != gid || sg != gid)
        return false;
    /* No way back: with every uid the user's, root must be out of reach. */
    if (setresuid(0, 0, 0) == 0 || setresgid(0, 0, 0) == 0)
        return false;
    /* A change of credentials resets both: the user must not ptrace a
     * copy of root's memory (fs.suid_dumpable may allow it), and the
     * child must still end with the daemon. */
    return prctl(PR_SET_DUMPABLE, 0) == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 &&
           getppid() == parent;
}
