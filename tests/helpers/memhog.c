/* memhog MB@WHEN...: hold MB megabytes of touched memory from WHEN on,
 * stage by stage.  WHEN is seconds after start (memhog 200@2 600@14: 200 MB
 * after 2 s, 600 MB after 14 s), or "usr1": when the process is sent
 * SIGUSR1 (memhog 200@0 600@usr1: a test grows it when it is ready, not
 * at a time a busy machine may miss).  Exits by itself after 600 s so a
 * test that dies never leaves it behind. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void wait_usr1(void)
{
    sigset_t usr1;
    int sig;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigwait(&usr1, &sig);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: memhog MB@SECONDS|MB@usr1...\n");
        return 2;
    }
    /* Held from the start, so that a SIGUSR1 sent early waits its stage. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    alarm(600);
    char *p = NULL;
    size_t held = 0;
    unsigned waited = 0;
    for (int i = 1; i < argc; i++) {
        size_t mb;
        unsigned at;
        char word[8];
        if (sscanf(argv[i], "%zu@%7s", &mb, word) == 2 && strcmp(word, "usr1") == 0) {
            wait_usr1();
        } else if (sscanf(argv[i], "%zu@%u", &mb, &at) == 2 && at >= waited) {
            sleep(at - waited);
            waited = at;
        } else {
            fprintf(stderr, "memhog: bad stage '%s'\n", argv[i]);
            return 2;
        }
        /* A megabyte at a time, as a real program grows. */
        for (; held < mb; held++) {
            p = realloc(p, (held + 1) << 20);
            if (!p)
                return 1;
            memset(p + (held << 20), 0x5a, 1 << 20);
        }
    }
    for (;;)
        pause();
}
