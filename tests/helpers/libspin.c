/* libspin.so: code loaded into another program (LD_PRELOAD) that burns
 * CPU there, as a user would to hide a computation inside an exempt
 * program.  Its constructor starts LGSPIN_THREADS busy threads (default
 * 2) and returns, so the host program runs on as usual; they end with it,
 * or after 600 s. */
#include <pthread.h>
#include <stdlib.h>
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

__attribute__((constructor)) static void start(void)
{
    const char *n = getenv("LGSPIN_THREADS");
    int threads = n ? atoi(n) : 2;
    for (int i = 0; i < threads && i < 64; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, burn, NULL) == 0)
            pthread_detach(t);
    }
}
