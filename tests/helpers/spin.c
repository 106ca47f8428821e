/* spin THREADS [DUTY] [LIFETIME]: a CPU hog for the tests.  THREADS
 * threads each busy DUTY (0..1, default 1) of every 100 ms.  It exits by
 * itself after LIFETIME seconds (default 600; a fraction such as 0.3 for
 * a short-lived one) so a test that dies never leaves a hog behind. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double duty = 1.0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *burn(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    for (;;) {
        double start = now();
        while (now() - start < 0.1 * duty)
            x++;
        if (duty < 1.0) {
            struct timespec rest = {0, (long)(0.1 * (1.0 - duty) * 1e9)};
            nanosleep(&rest, NULL);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    duty = argc > 2 ? atof(argv[2]) : 1.0;
    double lifetime = argc > 3 ? atof(argv[3]) : 600;
    if (threads < 1 || duty <= 0 || duty > 1 || lifetime <= 0) {
        fprintf(stderr, "usage: spin THREADS [DUTY] [LIFETIME]\n");
        return 2;
    }
    /* SIGALRM's default action ends it. */
    struct itimerval end = {{0, 0}, {(time_t)lifetime,
                                     (suseconds_t)((lifetime - (time_t)lifetime) * 1e6)}};
    setitimer(ITIMER_REAL, &end, NULL);
    for (int i = 1; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, burn, NULL);
    }
    burn(NULL);
    return 0;
}
