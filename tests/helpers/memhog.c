/* memhog FIRST_MB [THEN_MB DELAY_S]: hold FIRST_MB of touched memory;
 * after DELAY_S seconds grow to THEN_MB.  Exits by itself after 600 s so
 * a test that dies never leaves it behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *grow(char *p, size_t from_mb, size_t to_mb)
{
    p = realloc(p, to_mb << 20);
    if (!p) {
        perror("memhog");
        exit(1);
    }
    memset(p + (from_mb << 20), 0x5a, (to_mb - from_mb) << 20);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: memhog FIRST_MB [THEN_MB DELAY_S]\n");
        return 2;
    }
    size_t first = strtoul(argv[1], NULL, 10);
    alarm(600);
    char *p = grow(NULL, 0, first);
    if (argc == 4) {
        size_t then = strtoul(argv[2], NULL, 10);
        sleep((unsigned)atoi(argv[3]));
        /* Grow a megabyte at a time, as a real program would. */
        for (size_t mb = first; mb < then; mb++)
            p = grow(p, mb, mb + 1);
    }
    for (;;)
        pause();
}
