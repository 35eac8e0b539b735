/* Rendering config.yml: the fragments assembled around the generated
 * workflows, each entry written from its template, under the header. */
#include "render/config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "render/header.h"

typedef struct renderer {
    const cg_model *m;
    cg_config *out;
    const cg_entry_observer *observer; /* or NULL */
    cg_env *envs;                   /* [ntrees] */
    cg_error *err;
    cg_strbuf scratch;              /* the entries' expanded values */
    const char **reqs;              /* an entry's requires, its optional ones dropped */
    size_t reqs_cap;
} renderer;

/* A static entry's `requires` with its optional items (`name?`) written
 * without the '?' where their job is in workflow `wi`, dropped elsewhere;
 * nothing at all when none is left. */
static void write_static_requires(cg_yw *w, const cg_model *p, const cg_static_job *sj, size_t wi, json_t *req,
                                  const char *path)
{
    size_t n = 0, r = 0;
    bool *keep = cg_xcalloc(json_array_size(req) + 1, sizeof *keep);
    for (size_t i = 0; i < json_array_size(req); i++) {
        if (!cg_requires_item_name(json_array_get(req, i))) {
            keep[i] = true; /* lint reports its shape */
            n++;
            continue;
        }
        keep[i] = !cg_static_require_optional(sj, (uint32_t)r) || cg_model_written_in(p, wi, sj->requires[r], -1);
        n += keep[i];
        r++;
    }
    if (n) {
        cg_strbuf ip = CG_STRBUF_INIT;
        cg_yw_keys(w, "requires");
        cg_yw_seq_begin(w);
        r = 0;
        for (size_t i = 0; i < json_array_size(req); i++) {
            json_t *x = json_array_get(req, i);
            bool named = cg_requires_item_name(x) != NULL;
            const char *name = named ? sj->requires[r++] : NULL;
            if (!keep[i])
                continue;
            cg_path_join_index(&ip, path, i);
            if (!named) {
                cg_yw_value(w, p->manifest.doc, ip.buf, x);
            } else if (json_is_string(x)) {
                cg_yw_strs(w, name);
            } else { /* {name: status} */
                const char *k = json_object_iter_key(json_object_iter(x));
                cg_path_push_key(&ip, k);
                cg_yw_map_begin(w);
                cg_yw_keys(w, name);
                cg_yw_value(w, p->manifest.doc, ip.buf, json_object_iter_value(json_object_iter(x)));
                cg_yw_end(w);
            }
        }
        cg_yw_end(w);
        cg_strbuf_release(&ip);
    }
    free(keep);
}

static void write_static_entry(cg_yw *w, const cg_model *p, const cg_static_job *sj, const cg_workflow_decl *wd,
                               size_t wi, bool per_job_filters)
{
    const cg_doc *doc = p->manifest.doc;
    json_t *e = sj->entry;
    const char *path = sj->path;
    json_t *args = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
    bool has_filters = json_is_object(args) && json_object_get(args, "filters");
    bool optional = sj->requires_optional != NULL; /* its `requires` is rewritten */
    /* a special-PR selection runs it on the pull request: no filters at all */
    if (!optional && !sj->lift && (!per_job_filters || has_filters)) {
        cg_yw_value(w, doc, path, e);
        return;
    }
    if (!optional && sj->lift && !has_filters) {
        cg_yw_value(w, doc, path, e);
        return;
    }
    /* add the workflow's branch/tag filters to the entry, or drop its own */
    cg_yw_map_begin(w);
    if (json_is_string(e)) {
        cg_yw_key(w, json_string_value(e), json_string_length(e));
        cg_yw_map_begin(w);
    } else {
        const char *k = json_object_iter_key(json_object_iter(e));
        cg_yw_keys(w, k);
        cg_yw_map_begin(w);
        cg_strbuf ap = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
        cg_path_join_key(&ap, path, k);
        const char *ak;
        json_t *av;
        json_object_foreach(args, ak, av) {
            if (sj->lift && cg_streq(ak, "filters"))
                continue;
            cg_path_join_key(&kp, ap.buf, ak);
            if (optional && cg_streq(ak, "requires") && json_is_array(av)) {
                write_static_requires(w, p, sj, wi, av, kp.buf);
                continue;
            }
            cg_yw_keys(w, ak);
            cg_yw_value(w, doc, kp.buf, av);
        }
        cg_strbuf_release(&ap);
        cg_strbuf_release(&kp);
    }
    if (!sj->lift && per_job_filters && !has_filters)
        cg_write_filters(w, &wd->branches, &wd->tags);
    cg_yw_end(w);
    cg_yw_end(w);
}

static int render_workflow(renderer *R, size_t wi, cg_yw *w, cg_strbuf *out, cg_linemap *map, uint32_t *line,
                           size_t *mark)
{
    const cg_model *p = R->m;
    cg_error *err = R->err;
    const cg_manifest *m = &p->manifest;
    const cg_workflow_decl *wd = &m->workflows[wi];
    /* schedules: pipelines: a scheduled workflow runs when the scheduled
     * pipeline named like it starts (its branches then filter every job, as
     * a workflow without a trigger's do), and the others never in one */
    bool pipelines = m->pipeline.scheduled_pipelines && !m->pipeline.dynamic;
    bool any_schedule = false;
    for (size_t i = 0; i < m->nworkflows && pipelines; i++)
        any_schedule = any_schedule || m->workflows[i].schedule;
    bool per_job = (!wd->schedule || pipelines) && (wd->branches.set || wd->tags.set);
    cg_strbuf sub = CG_STRBUF_INIT;
    cg_yw_keys(w, wd->name);
    cg_yw_map_begin(w);
    bool own_when = pipelines && any_schedule;
    if (wd->when || own_when) {
        cg_strbuf_adds(&sub, wd->path);
        cg_strbuf_adds(&sub, "/when");
        cg_yw_keys(w, "when");
        if (own_when && wd->when) {
            cg_yw_map_begin(w);
            cg_yw_keys(w, "and");
            cg_yw_seq_begin(w);
            cg_yw_value(w, m->doc, sub.buf, wd->when);
        }
        if (own_when) {
            cg_yw_map_begin(w);
            if (wd->schedule) {
                cg_yw_keys(w, "equal");
                cg_yw_seq_begin(w);
                cg_yw_strs(w, wd->name);
                cg_yw_strs(w, "<< pipeline.schedule.name >>");
            } else {
                cg_yw_keys(w, "not");
                cg_yw_map_begin(w);
                cg_yw_keys(w, "equal");
                cg_yw_seq_begin(w);
                cg_yw_strs(w, "scheduled_pipeline");
                cg_yw_strs(w, "<< pipeline.trigger_source >>");
                cg_yw_end(w);
            }
            cg_yw_end(w);
            cg_yw_end(w);
        } else {
            cg_yw_value(w, m->doc, sub.buf, wd->when);
        }
        if (own_when && wd->when) {
            cg_yw_end(w);
            cg_yw_end(w);
        }
    }
    if (wd->schedule && !pipelines) {
        cg_yw_keys(w, "triggers");
        cg_yw_seq_begin(w);
        cg_yw_map_begin(w);
        cg_yw_keys(w, "schedule");
        cg_yw_map_begin(w);
        cg_yw_keys(w, "cron");
        cg_yw_strs(w, wd->schedule);
        if (wd->branches.set)
            cg_write_filters(w, &wd->branches, NULL);
        cg_yw_end(w);
        cg_yw_end(w);
        cg_yw_end(w);
    }
    cg_yw_keys(w, "jobs");
    cg_yw_seq_begin(w);
    int rc = 0;
    uint64_t bit = (uint64_t)1 << wi;
    const cg_wf_order *order = &p->orders[wi];
    /* the order's items, then the static entries a special-PR selection
     * copied here from other workflows */
    size_t ncopies = 0;
    for (size_t e = 0; e < p->nstatics; e++)
        ncopies += p->statics[e].workflow == wi && p->statics[e].origin != wi && !p->statics[e].culled;
    for (size_t i = 0; i < order->n + ncopies && rc == 0; i++) {
        const cg_static_job *sj = NULL;
        if (i >= order->n) {
            size_t nth = i - order->n;
            for (size_t e = 0; e < p->nstatics && !sj; e++)
                if (p->statics[e].workflow == wi && p->statics[e].origin != wi && !p->statics[e].culled && !nth--)
                    sj = &p->statics[e];
        } else if (order->items[i] < 0) {
            size_t s = (size_t)(-order->items[i] - 1);
            for (size_t e = 0; e < p->nstatics && !sj; e++)
                if (p->statics[e].workflow == wi && p->statics[e].origin == wi && p->statics[e].index == s)
                    sj = &p->statics[e];
        }
        if (i >= order->n || order->items[i] < 0) {
            if (sj && !sj->culled)
                write_static_entry(w, p, sj, wd, wi, per_job);
            continue;
        }
        /* the workflow's own lines (its key, triggers, static entries) come from the manifest */
        if (out->len > *mark) {
            cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, m->doc ? cg_doc_file(m->doc) : NULL,
                           wd->pos.line, -1, (int32_t)wi);
            *mark = out->len;
        }
        size_t k = (size_t)order->items[i];
        const cg_job *j = &p->jobs.v[k];
        cg_env *env = &R->envs[j->tree->index];
        if ((rc = cg_model_bind_job(p, env, j, (int)wi)) != 0)
            break;
        const cg_template *tpl = cg_model_template(p, j, env, err);
        if (!tpl) {
            rc = -1;
            break;
        }
        /* special-PR jobs run on the pull request whatever the filters say */
        bool lift = (j->special & bit) != 0;
        const char *const *reqs = j->requires;
        size_t nreqs = j->nrequires;
        if (j->requires_optional) { /* `name?`: only where that job is written */
            cg_grow(&R->reqs, &R->reqs_cap, j->nrequires + 1, sizeof *R->reqs);
            nreqs = 0;
            for (uint32_t r = 0; r < j->nrequires; r++)
                if (!j->requires_optional[r] || cg_model_written_in(p, wi, j->requires[r], j->requires_job[r]))
                    R->reqs[nreqs++] = j->requires[r];
            reqs = R->reqs;
        }
        cg_render_job rj = {j->name, reqs, nreqs, per_job && !lift ? &wd->branches : NULL,
                            per_job && !lift ? &wd->tags : NULL, lift, R->observer, (int)k, (int)wi,
                            &R->scratch};
        if ((rc = cg_template_render(tpl, env, &rj, w, err)) != 0)
            break;
        cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, NULL, 0, (int32_t)k, (int32_t)wi);
        *mark = out->len;
        /* lint reports a config over the limit; this stops one that explodes */
        if (out->len / 4 > (size_t)p->manifest.max_config_bytes) {
            rc = cg_error_at(err, &p->manifest.output_pos, "the generated workflows grow past %zu bytes (4 times "
                             "'limits: max_config_bytes'); stopping at job '%s'", out->len, j->name);
            break;
        }
    }
    if (rc == 0 && out->len > *mark) {
        cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, m->doc ? cg_doc_file(m->doc) : NULL,
                       wd->pos.line, -1, (int32_t)wi);
        *mark = out->len;
    }
    if (rc == 0) {
        cg_yw_end(w); /* jobs */
        cg_yw_end(w); /* the workflow */
        cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, NULL, 0, -1, (int32_t)wi);
        *mark = out->len;
    }
    cg_strbuf_release(&sub);
    return rc;
}

/* The generated workflows, written by cg_assemble() in their place. */
static int write_workflows(void *ctx, cg_strbuf *out, cg_linemap *map, uint32_t *line)
{
    renderer *R = ctx;
    cg_yw w;
    cg_yw_init_in_map(&w, out, 2);
    int rc = 0;
    bool first = true;
    if (R->m->manifest.workflows_version) {
        /* CircleCI 2.0's `version: 2` under `workflows:` */
        static const char v2[] = "  version: 2\n";
        cg_strbuf_add(out, v2, sizeof v2 - 1);
        cg_linemap_add(map, line, v2, sizeof v2 - 1, R->m->manifest.workflows_version_pos.file,
                       R->m->manifest.workflows_version_pos.line, -1, -1);
    }
    size_t mark = out->len;
    for (size_t i = 0; i < R->m->manifest.nworkflows && rc == 0; i++) {
        if (R->m->omitted & ((uint64_t)1 << i))
            continue; /* a special-PR selection left it without jobs */
        if (!first)
            cg_strbuf_addc(out, '\n'); /* a blank line between workflows */
        first = false;
        rc = render_workflow(R, i, &w, out, map, line, &mark);
    }
    cg_yw_release(&w);
    return rc;
}

void cg_config_init(cg_config *c)
{
    memset(c, 0, sizeof *c);
}

void cg_config_release(cg_config *c)
{
    cg_strbuf_release(&c->config);
    cg_linemap_release(&c->linemap);
    memset(c, 0, sizeof *c);
}

int cg_config_render(const cg_model *p, const cg_entry_observer *observer, cg_config *out, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_init(&envs[i], p->trees[i], err);
    const char **names = cg_xcalloc(m->nworkflows + 1, sizeof *names);
    cg_pos *wpos = cg_xcalloc(m->nworkflows + 1, sizeof *wpos);
    for (size_t i = 0; i < m->nworkflows; i++) {
        names[i] = m->workflows[i].name;
        wpos[i] = m->workflows[i].pos;
    }
    renderer R = {p, out, observer, envs, err, CG_STRBUF_INIT, NULL, 0};
    cg_assembly in = {"", p->fragments, p->nfragments, write_workflows, &R, names, wpos, m->nworkflows,
                      m->workflows_version ? &m->workflows_version_pos : NULL};
    /* the body goes straight after a header of the final length, whose
     * digests are filled in once the body is known: no copy of the body */
    static const char zeros[41] = "0000000000000000000000000000000000000000";
    cg_linemap bmap = {0};
    /* an entry per generated job entry (and a few for what is around
     * them): made once at its size, not grown by copying */
    size_t entries = 64;
    for (size_t k = 0; k < p->jobs.n; k++)
        for (uint64_t w = p->jobs.v[k].workflows; w; w &= w - 1)
            entries++;
    cg_grow(&bmap.v, &bmap.cap, entries, sizeof *bmap.v);
    cg_strbuf_reset(&out->config);
    cg_header_write(&out->config, p, zeros, zeros);
    out->header_len = out->config.len;
    int rc = cg_assemble(&in, &out->config, &bmap, err);
    cg_strbuf_release(&R.scratch);
    free(R.reqs);
    free(names);
    free(wpos);
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_release(&envs[i]);
    free(envs);
    if (rc == 0) {
        cg_sha256_hex(out->config.buf + out->header_len, out->config.len - out->header_len, out->body_digest, 20);
        cg_strbuf header = CG_STRBUF_INIT;
        cg_header_write(&header, p, p->sources_digest, out->body_digest);
        assert(header.len == out->header_len); /* the digests have a fixed width */
        memcpy(out->config.buf, header.buf, header.len);
        uint32_t header_lines = (uint32_t)cg_count_newlines(header.buf, header.len);
        cg_strbuf_release(&header);
        /* the body's map, moved down by the header's lines, under the
         * header's entry: in place, not copied */
        for (size_t e = 0; e < bmap.n; e++)
            bmap.v[e].out_line += header_lines;
        if (header_lines) {
            cg_grow(&bmap.v, &bmap.cap, bmap.n + 1, sizeof *bmap.v);
            memmove(bmap.v + 1, bmap.v, bmap.n * sizeof *bmap.v);
            bmap.v[0] = (cg_linemap_entry){1, header_lines, NULL, 0, -1, -1};
            bmap.n++;
        }
        cg_linemap_release(&out->linemap);
        out->linemap = bmap;
        memset(&bmap, 0, sizeof bmap);
    }
    cg_linemap_release(&bmap);
    return rc;
}
