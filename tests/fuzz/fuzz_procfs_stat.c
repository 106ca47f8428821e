/* /proc/PID/stat as the sampler reads it: the process name (comm) is the
 * user's, and may hold spaces, parentheses and newlines. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "observe/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proc_stat st;
    if (procfs_parse_stat((const char *)data, size, &st) < 0)
        return 0;
    FUZZ_CHECK(st.pid > 0);
    FUZZ_CHECK(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
    /* The name is what lies between the first '(' and the last ')'. */
    const char *open = memchr(data, '(', size);
    FUZZ_CHECK(open && strncmp(st.comm, open + 1, strlen(st.comm)) == 0);
    return 0;
}
