/* burn SECONDS [THREADS] [join|exit]: a short CPU user for the tests.
 * Each of THREADS threads (default 1) uses SECONDS of CPU of its own.
 * join (the default): the first thread waits for the others, then the
 * process exits; exit: the process exits as soon as the first thread's
 * share is used, ending the others wherever they are.  Just before it
 * exits it prints "burn PID CPU_USEC" (its CPU so far) on stdout, in one
 * write.  It ends by itself after 60 s whatever happens. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds;

static double cpu_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *burn(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    while (cpu_of(CLOCK_THREAD_CPUTIME_ID) < seconds)
        for (int i = 0; i < 20000; i++) /* mostly user time, not clock_gettime */
            x++;
    return NULL;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    const char *mode = argc > 3 ? argv[3] : "join";
    if (seconds <= 0 || seconds > 30 || threads < 1 || threads > 64 ||
        (strcmp(mode, "join") != 0 && strcmp(mode, "exit") != 0)) {
        fprintf(stderr, "usage: burn SECONDS [THREADS] [join|exit]\n");
        return 2;
    }
    alarm(60);
    pthread_t t[64];
    for (int i = 1; i < threads; i++)
        if (pthread_create(&t[i], NULL, burn, NULL) != 0)
            return 1;
    burn(NULL);
    if (strcmp(mode, "join") == 0)
        for (int i = 1; i < threads; i++)
            pthread_join(t[i], NULL);
    char line[64];
    int n = snprintf(line, sizeof(line), "burn %d %.0f\n", (int)getpid(),
                     cpu_of(CLOCK_PROCESS_CPUTIME_ID) * 1e6);
    if (write(1, line, (size_t)n) != n)
        return 1;
    /* exit_group at once: the other threads end with it ("exit"), and
     * nothing runs after the report that its record would count (in a
     * sanitizer build LeakSanitizer's scan at exit took some 6 ms). */
    _exit(0);
}
