/* Helpers shared by the benchmarks (benchutil.c). */
#ifndef LOGINGUARD_BENCHUTIL_H
#define LOGINGUARD_BENCHUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>

double tv_us(struct timeval t);
double wall_us(void);
void nap_ms(long ms);
ssize_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
char *read_text(const char *path, size_t max);
int write_text(const char *path, const char *text);
double machine_busy_us(void);
bool has_token(const char *list, const char *word);

#endif
