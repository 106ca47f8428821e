/* A datagram on the proc connector's socket, as the kernel sends it (or
 * as anyone on the node may: every message is checked before it is
 * believed). */
#include "config.h"

#include "fuzz.h"
#include "observe/proc_connector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pc_parsed out;
    proc_connector_parse(data, size, 0, &out);
    FUZZ_CHECK(out.count <= sizeof(out.events) / sizeof(out.events[0]));
    for (size_t i = 0; i < out.count; i++) {
        FUZZ_CHECK(out.events[i].pid > 0);
        FUZZ_CHECK(out.events[i].kind >= PC_FORK && out.events[i].kind <= PC_EXIT);
    }
    /* The same bytes from another process are all rejected. */
    proc_connector_parse(data, size, 4242, &out);
    FUZZ_CHECK(out.count == 0 && out.rejected == 1);
    return 0;
}
