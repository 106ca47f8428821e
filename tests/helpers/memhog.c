/* memhog MB@SECONDS...: hold MB megabytes of touched memory from SECONDS
 * after start, stage by stage (memhog 200@2 600@14: 200 MB after 2 s,
 * 600 MB after 14 s).  Exits by itself after 600 s so a test that dies
 * never leaves it behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: memhog MB@SECONDS...\n");
        return 2;
    }
    alarm(600);
    char *p = NULL;
    size_t held = 0;
    unsigned waited = 0;
    for (int i = 1; i < argc; i++) {
        size_t mb;
        unsigned at;
        if (sscanf(argv[i], "%zu@%u", &mb, &at) != 2 || at < waited) {
            fprintf(stderr, "memhog: bad stage '%s'\n", argv[i]);
            return 2;
        }
        sleep(at - waited);
        waited = at;
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
