#include "render/dot.h"
#include "render/dot_impl.h"

void cg_dot_opts_init(cg_dot_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_nodes = CG_DOT_MAX_NODES;
    o->fit_px = CG_DOT_FIT_PX;
}

/* ---- the files of the `diagrams:` folder ---- */

static void file_name(cg_strbuf *out, const char *kind, const char *name)
{
    cg_strbuf_addf(out, "%s-", kind);
    for (const char *c = name; *c; c++)
        cg_strbuf_addc(out, cg_isalnum(*c) || *c == '.' || *c == '_' || *c == '-' ? *c : '_');
}

size_t cg_dot_outputs(const cg_model *p, cg_pool *pool, cg_dot_output *out, size_t max)
{
    const cg_manifest *m = &p->manifest;
    if (!m->diagrams)
        return 0;
    size_t total = p->ntrees + m->nworkflows;
    size_t dirlen = strlen(m->diagrams);
    while (dirlen && m->diagrams[dirlen - 1] == '/')
        dirlen--;
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    cg_strbuf path = CG_STRBUF_INIT, data = CG_STRBUF_INIT;
    for (size_t i = 0; i < total && i < max; i++) {
        bool tree = i < p->ntrees;
        size_t k = tree ? i : i - p->ntrees;
        cg_strbuf_reset(&path);
        cg_strbuf_reset(&data);
        if (dirlen && !(dirlen == 1 && m->diagrams[0] == '.')) {
            cg_strbuf_add(&path, m->diagrams, dirlen);
            cg_strbuf_addc(&path, '/');
        }
        file_name(&path, tree ? "tree" : "workflow", tree ? p->trees[k]->name : m->workflows[k].name);
        /* two names made the same by the file-name rule */
        size_t stem = path.len;
        for (unsigned n = 2;; n++) {
            cg_strbuf_adds(&path, ".dot");
            bool dup = false;
            for (size_t j = 0; j < i && !dup; j++)
                dup = cg_streq(out[j].rel, path.buf);
            if (!dup)
                break;
            cg_strbuf_truncate(&path, stem);
            cg_strbuf_addf(&path, "-%u", n);
        }
        if (tree)
            cg_dot_tree(p, k, &o, &data);
        else
            cg_dot_workflow(p, k, &o, &data);
        out[i].rel = cg_pool_strndup(pool, path.buf, path.len);
        out[i].data = cg_pool_strndup(pool, cg_strbuf_str(&data), data.len);
        out[i].len = data.len;
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&data);
    return total;
}
