/* renamer MS NAME1 NAME2 [ARG]...: a mostly idle process that renames
 * itself (prctl PR_SET_NAME) every MS milliseconds, NAME1, NAME2, NAME1...
 * Its other arguments are there to be read: a hostile command line.  It
 * exits by itself after 600 s (LG_RENAMER_SECONDS, for the soak) so a
 * test that dies leaves nothing behind. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: renamer MS NAME1 NAME2 [ARG]...\n");
        return 2;
    }
    long ms = atol(argv[1]);
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    const char *life = getenv("LG_RENAMER_SECONDS");
    time_t end = time(NULL) + (life && atol(life) > 0 ? atol(life) : 600);
    for (unsigned i = 0; time(NULL) < end; i++) {
        prctl(PR_SET_NAME, argv[2 + i % 2], 0, 0, 0);
        nanosleep(&pause, NULL);
    }
    return 0;
}
