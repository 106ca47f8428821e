#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "notices.h"
#include "strbuf.h"
#include "utf8.h"
#include "util.h"

/* A hostile value as text that only shows (utf8_escape: controls, bytes
 * that are not UTF-8, C1 and bidirectional controls as \xNN). */
static void add_escaped(struct strbuf *b, const char *value)
{
    size_t len = strlen(value);
    char *out = xmalloc(4 * len + 1);
    strbuf_add(b, out, utf8_escape(value, len, out, 4 * len + 1));
    free(out);
}

/* Each placeholder's field, by placeholder index; unknown names are not
 * an error (a caller may fill more than a site's template uses). */
static const struct notice_field **fields_by_index(const struct notice_field *fields,
                                                   size_t count)
{
    size_t n = 0;
    while (notice_placeholders[n])
        n++;
    const struct notice_field **by = xcalloc(n, sizeof(*by));
    for (size_t i = 0; i < count; i++)
        for (size_t p = 0; p < n; p++)
            if (fields[i].name && strcmp(fields[i].name, notice_placeholders[p]) == 0)
                by[p] = &fields[i];
    return by;
}

static bool line_all_empty(const struct notice_line *line, const struct notice_field **by)
{
    bool any = false;
    for (size_t i = 0; i < line->count; i++) {
        if (line->pieces[i].text)
            continue;
        const struct notice_field *f = by[line->pieces[i].placeholder];
        if (f && f->value && *f->value)
            return false;
        any = true;
    }
    return any;
}

static void add_line(struct strbuf *b, const struct notice_line *line,
                     const struct notice_field **by, bool trust_safe)
{
    for (size_t i = 0; i < line->count; i++) {
        const struct notice_piece *p = &line->pieces[i];
        const struct notice_field *f = p->text ? NULL : by[p->placeholder];
        if (p->text)
            strbuf_adds(b, p->text);
        else if (f && f->value && f->safe && trust_safe)
            strbuf_adds(b, f->value);
        else if (f && f->value)
            add_escaped(b, f->value);
    }
}

int notice_render(const struct notice_templates *t, enum notice_kind k,
                  const struct notice_field *fields, size_t field_count, struct notice *out)
{
    memset(out, 0, sizeof(*out));
    if (k >= NOTICE_KIND_COUNT || !t->kinds[k].path)
        return -1;
    const struct notice_template *tpl = &t->kinds[k];
    const struct notice_field **by = fields_by_index(fields, field_count);
    struct strbuf b = {0};
    /* A subject is one line (an email header, a notification title). */
    add_line(&b, &tpl->subject, by, false);
    out->subject = strbuf_take(&b);
    for (size_t i = 0; i < tpl->body_count; i++) {
        if (line_all_empty(&tpl->body[i], by))
            continue;
        add_line(&b, &tpl->body[i], by, true);
        strbuf_addc(&b, '\n');
    }
    out->body = strbuf_take(&b);
    free(by);
    return 0;
}

void notice_free(struct notice *n)
{
    free(n->subject);
    free(n->body);
    n->subject = n->body = NULL;
}
