/* libspin.so: code loaded into another program (LD_PRELOAD) that burns
 * CPU there, as a user would to hide a computation inside an exempt
 * program.  Its constructor starts LGSPIN_THREADS busy threads (default
 * 2) and returns, so the host program runs on as usual; they end with it,
 * or after 600 s.  With LGSPIN_SCRUB set it also renames LD_PRELOAD in
 * its own environment block (what /proc/PID/environ shows), as code that
 * covers its tracks would. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *burn(void *arg)
{
    (void)arg;
    time_t end = time(NULL) + 600;
    volatile unsigned long x = 0;
    while (time(NULL) < end)
        for (int i = 0; i < 1000000; i++)
            x++;
    return NULL;
}

extern char **environ;

__attribute__((constructor)) static void start(void)
{
    if (getenv("LGSPIN_SCRUB"))
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "LD_PRELOAD=", 11) == 0)
                (*e)[0] = 'X';
    const char *n = getenv("LGSPIN_THREADS");
    int threads = n ? atoi(n) : 2;
    for (int i = 0; i < threads && i < 64; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, burn, NULL) == 0)
            pthread_detach(t);
    }
}
