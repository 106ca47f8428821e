/* STATE_DIR/login-notices/UID.json, the notices kept for a user's next
 * login: whatever the file holds, taking the unread ones marks them
 * read, and a notice added after that is the one unread notice. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "record/login_notices.h"
#include "util.h"

#define UID 4242

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_write("ln/login-notices/4242.json", data, size);
    char *state_dir = xstrndup(path, strlen(path) - strlen("/login-notices/4242.json"));
    char err[512];
    json_t *unread = NULL;
    FUZZ_CHECK(login_notices_take(state_dir, UID, &unread, err, sizeof(err)) == 0);
    FUZZ_CHECK(json_is_array(unread));
    json_decref(unread);

    FUZZ_CHECK(login_notices_take(state_dir, UID, &unread, err, sizeof(err)) == 0);
    FUZZ_CHECK(json_array_size(unread) == 0);
    json_decref(unread);

    FUZZ_CHECK(login_notice_add(state_dir, UID, 1700000000000000ULL, "throttled", "Subject",
                                "Body\n", err, sizeof(err)) == 0);
    FUZZ_CHECK(login_notices_take(state_dir, UID, &unread, err, sizeof(err)) == 0);
    FUZZ_CHECK(json_array_size(unread) == 1);
    json_t *n = json_array_get(unread, 0);
    FUZZ_CHECK(json_is_string(json_object_get(n, "subject")) &&
               strcmp(json_string_value(json_object_get(n, "subject")), "Subject") == 0);
    json_decref(unread);
    unlink(path);
    free(state_dir);
    free(path);
    return 0;
}
