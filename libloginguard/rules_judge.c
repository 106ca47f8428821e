#include "config.h"

#include "rules_judge.h"

static unsigned rule_parts(const struct rule *r)
{
    return (r->exe ? RULE_PART_EXE : 0) | (r->comm ? RULE_PART_COMM : 0) |
           (r->argv_text ? RULE_PART_ARGV : 0);
}

struct verdict classify_process(const struct rule_set *rules, const struct program *prog,
                                const char *comm)
{
    const struct rule *r = programs_classify(rules, prog, comm);
    return (struct verdict){r ? r->class : CLASS_NONE, r, r ? rule_parts(r) : 0};
}

static const struct program *judge_program(struct judge *j, const struct program_facts *f)
{
    struct rules_judge *r = (struct rules_judge *)j;
    return programs_get(&r->programs, r->rules, f);
}

static void judge_put(struct judge *j, const struct program *prog)
{
    programs_put(&((struct rules_judge *)j)->programs, prog);
}

/* An exempt program that runs code not its own counts like any other. */
static struct verdict judge_verdict(const struct judge *j, const struct program *prog,
                                    const char *comm, bool foreign_code)
{
    struct verdict v = classify_process(((const struct rules_judge *)j)->rules, prog, comm);
    if (v.class == CLASS_EXEMPT && foreign_code)
        v.class = CLASS_NONE;
    return v;
}

static void judge_forget_all(struct judge *j)
{
    programs_free(&((struct rules_judge *)j)->programs);
}

void rules_judge_init(struct rules_judge *j, const struct rule_set *rules)
{
    *j = (struct rules_judge){
        .judge = {.program = judge_program, .put = judge_put, .verdict = judge_verdict,
                  .forget_all = judge_forget_all},
        .rules = rules,
    };
}

void rules_judge_free(struct rules_judge *j)
{
    programs_free(&j->programs);
}
