/* spin THREADS [DUTY] [LIFETIME]: a CPU hog for the tests.  THREADS
 * threads each want DUTY (0..1, default 1) of a core: a thread burns
 * DUTY x 100 ms of its own CPU time, then sleeps (1 - DUTY) x 100 ms.
 * The burn is counted in CPU time, not wall time, and each thread starts
 * at a random point of its period: several processes started at the same
 * moment then neither wait for each other's bursts nor stay in step (in
 * wall time, eight processes at 0.25 started together burn in step on
 * two cores and use 1 to 1.5 cores between them, not 2).  It exits by
 * itself after LIFETIME seconds (default 600; a fraction such as 0.3 for
 * a short-lived one) so a test that dies never leaves a hog behind. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double duty = 1.0;

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rest(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void *burn(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    volatile unsigned long x = 0;
    if (duty >= 1.0)
        for (;;)
            x++;
    rest(0.1 * (double)(rand_r(&seed) % 1000) / 1000.0);
    for (;;) {
        /* The clock is a system call: read it every few thousand turns. */
        double start = seconds(CLOCK_THREAD_CPUTIME_ID);
        do
            for (int i = 0; i < 20000; i++)
                x++;
        while (seconds(CLOCK_THREAD_CPUTIME_ID) - start < 0.1 * duty);
        rest(0.1 * (1.0 - duty));
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
    unsigned seed = (unsigned)getpid() ^ (unsigned)(seconds(CLOCK_MONOTONIC) * 1e6);
    for (int i = 1; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, burn, (void *)(size_t)(seed + (unsigned)i * 7919u));
    }
    burn((void *)(size_t)seed);
    return 0;
}
