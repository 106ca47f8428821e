/* /proc/locks, where a second daemon finds the pid of the first. */
#include "config.h"

#include <sys/sysmacros.h>

#include "base/instance_lock.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    FUZZ_CHECK(instance_lock_holder(text, size, makedev(0, 0x1f), 12345) >= 0);
    FUZZ_CHECK(instance_lock_holder(text, size, makedev(8, 1), 777) >= 0);
    FUZZ_CHECK(instance_lock_holder(text, size, makedev(0xfff, 0xfffff), (ino_t)-1) >= 0);
    return 0;
}
