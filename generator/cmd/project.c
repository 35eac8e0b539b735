#include "cmd/project.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void cg_project_init(cg_project *p)
{
    memset(p, 0, sizeof *p);
    cg_model_init(&p->m);
    cg_config_init(&p->out);
    cg_pool_init(&p->diagrams_pool);
}

void cg_project_release(cg_project *p)
{
    cg_model_release(&p->m);
    cg_config_release(&p->out);
    if (p->linted)
        cg_lint_release(&p->lint);
    free(p->diagrams);
    cg_pool_release(&p->diagrams_pool);
    cg_strbuf_release(&p->setup);
    memset(p, 0, sizeof *p);
}

int cg_project_load(cg_project *p, const cg_options *o, cg_error *err)
{
    return cg_model_load(&p->m, o, err);
}

/* What the drawing thread owns until it is joined: it reads the model,
 * which nobody writes once loaded. */
typedef struct drawing {
    const cg_model *p;
    cg_pool pool;
    cg_dot_output *v;
    size_t n;
} drawing;

static void *draw(void *arg)
{
    drawing *d = arg;
    size_t n = cg_dot_outputs(d->p, &d->pool, NULL, 0);
    d->v = cg_xcalloc(n + 1, sizeof *d->v);
    d->n = cg_dot_outputs(d->p, &d->pool, d->v, n);
    return NULL;
}

static void keep_drawing(cg_project *p, drawing *d)
{
    cg_pool_release(&p->diagrams_pool);
    free(p->diagrams);
    p->diagrams_pool = d->pool;
    p->diagrams = d->v;
    p->ndiagrams = d->n;
    p->drawn = true;
}

size_t cg_project_diagrams(cg_project *p, const cg_dot_output **out)
{
    if (!p->drawn) {
        drawing d = {&p->m, {0}, NULL, 0};
        cg_pool_init(&d.pool);
        draw(&d);
        keep_drawing(p, &d);
    }
    *out = p->diagrams;
    return p->ndiagrams;
}

/* lint watches the entries as they are rendered */
static void lint_begin(void *ctx, const cg_template *tpl, int job, int workflow, const char *invoke)
{
    cg_lint_entry_begin(ctx, tpl, job, workflow, invoke);
}

static void lint_arg(void *ctx, const void *key_id, const char *key, const char *key_path, char kind,
                     const char *text, bool typed, const char *value_path, cg_env *env, int source_id)
{
    cg_lint_entry_arg(ctx, key_id, key, key_path, kind, text, typed, value_path, env, source_id);
}

static void lint_end(void *ctx)
{
    cg_lint_entry_end(ctx);
}

static int render(cg_project *p, cg_error *err)
{
    if (p->linted)
        cg_lint_release(&p->lint);
    cg_lint_init(&p->lint, &p->m);
    p->linted = true;
    cg_entry_observer lint = {lint_begin, lint_arg, lint_end, &p->lint};
    int rc = cg_config_render(&p->m, &lint, &p->out, err);
    if (rc == 0)
        cg_lint_finish(&p->lint, &p->out);
    return rc;
}

int cg_project_render(cg_project *p, cg_error *err)
{
    /* a thread costs more than the diagrams of a small matrix: 0.3 ms on
     * the embedded default (creating it, and the cross-core TLB flushes
     * every later unmap pays once a second thread ran) */
    if (!p->draw_diagrams || p->drawn || p->m.jobs.n < 10000)
        return render(p, err);
    /* on two cores the diagrams of a large one cost no time: drawn while the config is */
    drawing d = {&p->m, {0}, NULL, 0};
    cg_pool_init(&d.pool);
    pthread_t th;
    if (!cg_threads_allowed() || pthread_create(&th, NULL, draw, &d) != 0) {
        cg_pool_release(&d.pool); /* no thread: drawn when asked for */
        return render(p, err);
    }
    int rc = render(p, err);
    pthread_join(th, NULL);
    keep_drawing(p, &d);
    return rc;
}
