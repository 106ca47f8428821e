#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observe/pidmarks.h"
#include "util.h"

static size_t slot_of(const struct pid_marks *m, pid_t pid)
{
    size_t h = ((size_t)pid * 2654435761u) & (m->index_size - 1);
    while (m->index[h] != SIZE_MAX && m->marks[m->index[h]].pid != pid)
        h = (h + 1) & (m->index_size - 1);
    return h;
}

static void rebuild_index(struct pid_marks *m, size_t size)
{
    free(m->index);
    m->index = xmalloc(size * sizeof(*m->index));
    m->index_size = size;
    memset(m->index, 0xff, size * sizeof(*m->index));
    for (size_t i = 0; i < m->count; i++)
        m->index[slot_of(m, m->marks[i].pid)] = i;
}

unsigned *pid_marks_get(struct pid_marks *m, pid_t pid)
{
    if ((m->count + 1) * 2 > m->index_size)
        rebuild_index(m, m->index_size ? m->index_size * 2 : 256);
    size_t h = slot_of(m, pid);
    if (m->index[h] == SIZE_MAX) {
        m->marks = grow_array(m->marks, m->count, &m->capacity, sizeof(*m->marks));
        m->marks[m->count] = (struct pid_mark){pid, 0};
        m->index[h] = m->count++;
    }
    return &m->marks[m->index[h]].flags;
}

void pid_marks_clear(struct pid_marks *m)
{
    if (m->count && m->index)
        memset(m->index, 0xff, m->index_size * sizeof(*m->index));
    m->count = 0;
}

void pid_marks_free(struct pid_marks *m)
{
    free(m->marks);
    free(m->index);
    memset(m, 0, sizeof(*m));
}
