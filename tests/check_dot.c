/* The diagrams: DOT escaping, node and edge counts against the model,
 * collapsing, the node limit, byte stability, and `cigen graph`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/project.h"
#include "render/dot.h"
#include "render/dot_impl.h"
#include "testutil.h"

/* ---- cg_dot_quote ---- */

static const struct {
    const char *in;
    size_t len;
    const char *out;
} quotes[] = {
    {"plain", 5, "\"plain\""},
    {"", 0, "\"\""},
    {"say \"hi\"", 8, "\"say \\\"hi\\\"\""},
    {"back\\slash", 10, "\"back\\\\slash\""},
    {"ends\\", 5, "\"ends\\\\\""},
    {"\\N\\G", 4, "\"\\\\N\\\\G\""},          /* never a Graphviz escape */
    {"two\nlines", 9, "\"two\\nlines\""},
    {"crlf\r\nx", 7, "\"crlf\\nx\""},
    {"cr\rx", 4, "\"cr\\nx\""},
    {"tab\there", 8, "\"tab\\\\x09here\""},
    {"nul\0byte", 8, "\"nul\\\\x00byte\""},
    {"del\x7f", 4, "\"del\\\\x7F\""},
    {"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\x8d", 14, "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\x8d\""},
    {"bad\xff", 4, "\"bad\\\\xFF\""},
    {"cut\xc3", 4, "\"cut\\\\xC3\""},
    {"overlong\xc0\xaf", 10, "\"overlong\\\\xC0\\\\xAF\""},
    {"surrogate\xed\xa0\x80", 12, "\"surrogate\\\\xED\\\\xA0\\\\x80\""},
    {"{<record|shape>}", 16, "\"{<record|shape>}\""},
};

START_TEST(quote_table)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_dot_quote(&sb, quotes[_i].in, quotes[_i].len);
    ck_assert_msg(cg_streq(sb.buf, quotes[_i].out), "quote #%d: got %s, want %s", _i, sb.buf, quotes[_i].out);
    cg_strbuf_release(&sb);
}
END_TEST

/* What Graphviz shows for a quoted label: \" is ", \\ is \, \n ends a line. */
static char *unquote(const char *q)
{
    size_t n = strlen(q);
    ck_assert(n >= 2 && q[0] == '"' && q[n - 1] == '"');
    cg_strbuf out = CG_STRBUF_INIT;
    for (size_t i = 1; i + 1 < n; i++) {
        if (q[i] != '\\') {
            ck_assert_msg(q[i] != '"' && q[i] != '\n', "unescaped %c in %s", q[i], q);
            cg_strbuf_addc(&out, q[i]);
            continue;
        }
        char c = q[++i];
        ck_assert_msg(c == '"' || c == '\\' || c == 'n', "escape \\%c in %s", c, q);
        cg_strbuf_addc(&out, c == 'n' ? '\n' : c);
    }
    return cg_strbuf_detach(&out, NULL);
}

START_TEST(quote_round_trip)
{
    static const char *const values[] = {"a \"quoted\" value", "C:\\path\\", "line 1\nline 2\n", "\\\"\\n",
                                         "\"", "\\", "\n", "mixed \\\"\n\\n end"};
    for (size_t i = 0; i < CG_ARRAY_LEN(values); i++) {
        cg_strbuf sb = CG_STRBUF_INIT;
        cg_dot_quote(&sb, values[i], strlen(values[i]));
        char *back = unquote(sb.buf);
        ck_assert_msg(cg_streq(back, values[i]), "round trip of %s gives %s", values[i], back);
        free(back);
        cg_strbuf_release(&sb);
    }
}
END_TEST

/* ---- a small reader of the DOT cigen writes: node and edge statements ---- */

typedef struct dotg {
    cg_pool pool;
    cg_map ids;        /* node id -> index + 1 */
    size_t nodes, edges;
    size_t *out;       /* out-degree per node */
    size_t cap;
    size_t dashed_leaves;
} dotg;

/* Reads a quoted string at *p (advancing past it); NULL when there is none. */
static const char *read_quoted(dotg *g, const char **p)
{
    const char *s = *p;
    if (*s != '"')
        return NULL;
    cg_strbuf sb = CG_STRBUF_INIT;
    for (s++; *s && *s != '"'; s++) {
        if (*s == '\\' && s[1])
            cg_strbuf_addc(&sb, *s++);
        cg_strbuf_addc(&sb, *s);
    }
    ck_assert_msg(*s == '"', "unterminated string");
    *p = s + 1;
    const char *r = cg_intern(&g->pool, cg_strbuf_str(&sb));
    cg_strbuf_release(&sb);
    return r;
}

static size_t node_index(dotg *g, const char *id)
{
    size_t i = (size_t)cg_map_get(&g->ids, id);
    ck_assert_msg(i != 0, "edge to an undeclared node %s", id);
    return i - 1;
}

static void dot_parse(dotg *g, const char *text)
{
    memset(g, 0, sizeof *g);
    cg_pool_init(&g->pool);
    cg_map_init(&g->ids);
    ck_assert_msg(cg_dot_is_generated(text, strlen(text)), "no header: %.60s", text);
    bool *dashed = NULL;
    size_t dcap = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_msg(end != NULL, "the last line has no newline");
        const char *p = line;
        while (*p == ' ')
            p++;
        const char *a = read_quoted(g, &p);
        if (a) {
            if (strncmp(p, " -> ", 4) == 0) {
                p += 4;
                const char *b = read_quoted(g, &p);
                ck_assert(b != NULL);
                g->out[node_index(g, a)]++;
                node_index(g, b);
                g->edges++;
            } else {
                ck_assert_msg(strncmp(p, " [", 2) == 0, "not a node statement: %.*s", (int)(end - line), line);
                ck_assert_msg(!cg_map_has(&g->ids, a), "node %s declared twice", a);
                cg_grow(&g->out, &g->cap, g->nodes + 1, sizeof *g->out);
                cg_grow(&dashed, &dcap, g->nodes + 1, sizeof *dashed);
                g->out[g->nodes] = 0;
                char *rest = cg_xstrndup(p, (size_t)(end - p));
                dashed[g->nodes] = strstr(rest, "dashed") != NULL;
                free(rest);
                cg_map_put(&g->ids, a, (void *)(g->nodes + 1));
                g->nodes++;
            }
        }
        line = end + 1;
    }
    for (size_t i = 0; i < g->nodes; i++)
        g->dashed_leaves += g->out[i] == 0 && dashed[i];
    free(dashed);
}

static size_t dot_leaves(const dotg *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nodes; i++)
        n += g->out[i] == 0;
    return n;
}

static void dot_free(dotg *g)
{
    cg_map_release(&g->ids);
    cg_pool_release(&g->pool);
    free(g->out);
}

/* ---- the model ---- */

static void load(cg_project *p, const char *rel)
{
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/%s", tu_srcdir(), rel);
    cg_options o = {.dir = dir.buf};
    cg_error err;
    cg_error_init(&err);
    cg_project_init(p);
    int rc = cg_project_load(p, &o, &err);
    ck_assert_msg(rc == 0, "%s does not load: %s", rel, cg_strbuf_str(&err.text));
    p->m.opt.dir = NULL; /* dir.buf is gone */
    cg_error_release(&err);
    cg_strbuf_release(&dir);
}

/* The static entries of a workflow and the requires they list. */
static void static_counts(const cg_workflow_decl *wd, size_t *entries, size_t *requires)
{
    *entries = *requires = 0;
    for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
        json_t *e = json_array_get(wd->jobs, i);
        (*entries)++;
        if (json_is_object(e)) {
            json_t *args = json_object_iter_value(json_object_iter(e));
            *requires += json_array_size(json_object_get(args, "requires"));
        }
    }
}

/* Every diagram of a project: tree leaves are its cells (live and removed,
 * removed ones dashed), a tree has one edge less than nodes; job graph nodes
 * are the workflow's jobs, edges its requires. */
static void check_counts(const char *rel)
{
    cg_project p;
    load(&p, rel);
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    o.max_nodes = 0;
    o.fit_px = 0; /* the whole diagram */
    for (size_t t = 0; t < p.m.ntrees; t++) {
        cg_strbuf sb = CG_STRBUF_INIT;
        cg_dot_tree(&p.m, t, &o, &sb);
        dotg g;
        dot_parse(&g, sb.buf);
        ck_assert_msg(dot_leaves(&g) == p.m.cells[t].n, "%s: tree %s: %zu leaves for %zu cells", rel,
                      p.m.trees[t]->name, dot_leaves(&g), p.m.cells[t].n);
        ck_assert_msg(g.dashed_leaves == p.m.cells[t].n - p.m.cells[t].nlive, "%s: %zu dashed leaves for %zu removed",
                      rel, g.dashed_leaves, p.m.cells[t].n - p.m.cells[t].nlive);
        ck_assert_uint_eq(g.edges, g.nodes - 1);
        dot_free(&g);
        cg_strbuf_release(&sb);
    }
    for (size_t w = 0; w < p.m.manifest.nworkflows; w++) {
        size_t jobs, requires;
        static_counts(&p.m.manifest.workflows[w], &jobs, &requires);
        for (size_t k = 0; k < p.m.jobs.n; k++)
            if (p.m.jobs.v[k].workflows & ((uint64_t)1 << w)) {
                jobs++;
                requires += p.m.jobs.v[k].nrequires;
            }
        cg_strbuf sb = CG_STRBUF_INIT;
        cg_dot_workflow(&p.m, w, &o, &sb);
        dotg g;
        dot_parse(&g, sb.buf);
        ck_assert_msg(g.nodes == jobs && g.edges == requires, "%s: workflow %s: %zu nodes, %zu edges; want %zu, %zu",
                      rel, p.m.manifest.workflows[w].name, g.nodes, g.edges, jobs, requires);
        dot_free(&g);
        cg_strbuf_release(&sb);
    }
    cg_project_release(&p);
}

START_TEST(counts_small)
{
    check_counts("tests/bases/graph");
}
END_TEST

START_TEST(counts_default)
{
    check_counts(".");
}
END_TEST

START_TEST(counts_large)
{
    check_counts("tests/golden/graph-limit/in");
}
END_TEST

/* The distinct cells (or jobs) once the collapsed dimensions are ignored. */
static size_t distinct_keys(const cg_project *p, size_t t, const char *const *collapse, size_t n, int phase)
{
    const cg_tree *tree = p->m.trees[t];
    cg_map seen;
    cg_pool pool;
    cg_map_init(&seen);
    cg_pool_init(&pool);
    size_t count = 0;
    for (size_t c = 0; c < p->m.cells[t].n; c++) {
        const cg_cell *cell = &p->m.cells[t].v[c];
        if (phase >= 0) { /* a job of this cell in the phase? */
            bool has = false;
            for (size_t k = 0; k < p->m.jobs.n && !has; k++)
                has = p->m.jobs.v[k].cell == cell && (int)p->m.jobs.v[k].phase == phase;
            if (!has)
                continue;
        }
        cg_strbuf key = CG_STRBUF_INIT;
        for (size_t d = 0; d < tree->ndims; d++) {
            bool col = false;
            for (size_t i = 0; i < n; i++)
                col |= cg_streq(collapse[i], tree->dims[d]);
            cg_strbuf_addf(&key, "%s\x1f", !cell->values[d] ? "\x01" : col ? "\x02" : cell->values[d]);
        }
        if (!cg_map_has(&seen, key.buf)) {
            cg_map_put(&seen, cg_intern(&pool, key.buf), (void *)1);
            count++;
        }
        cg_strbuf_release(&key);
    }
    cg_map_release(&seen);
    cg_pool_release(&pool);
    return count;
}

/* A diagram handed to a sink as it is drawn is the same bytes, in pieces
 * (after every node with a chunk of 1 byte), what `out` held before first,
 * `out` left empty: whole, collapsed, fitted and as a note. */
typedef struct collect {
    cg_strbuf all;
    size_t puts;
} collect;

static void collect_put(void *ctx, const char *data, size_t len)
{
    collect *c = ctx;
    ck_assert_uint_gt(len, 0);
    cg_strbuf_add(&c->all, data, len);
    c->puts++;
}

static void check_sink(const char *rel)
{
    cg_project p;
    load(&p, rel);
    for (int variant = 0; variant < 4; variant++) {
        cg_dot_opts o;
        cg_dot_opts_init(&o); /* variant 0: fitted to a screen */
        const char *python[] = {"python"};
        if (variant == 1)
            o.max_nodes = 0, o.fit_px = 0; /* whole */
        if (variant == 2)
            o.collapse = python, o.ncollapse = 1, o.fit_px = 0;
        if (variant == 3)
            o.max_nodes = 1, o.fit_px = 0; /* a note */
        for (size_t i = 0; i < p.m.ntrees + p.m.manifest.nworkflows; i++) {
            cg_strbuf whole = CG_STRBUF_INIT, out = CG_STRBUF_INIT;
            collect c = {CG_STRBUF_INIT, 0};
            cg_dot_sink sink = {collect_put, &c, 1};
            cg_strbuf_adds(&out, "before\n");
            cg_strbuf_adds(&whole, "before\n");
            bool tree = i < p.m.ntrees;
            size_t k = tree ? i : i - p.m.ntrees;
            if (tree)
                cg_dot_tree(&p.m, k, &o, &whole);
            else
                cg_dot_workflow(&p.m, k, &o, &whole);
            o.sink = &sink;
            if (tree)
                cg_dot_tree(&p.m, k, &o, &out);
            else
                cg_dot_workflow(&p.m, k, &o, &out);
            o.sink = NULL;
            ck_assert_msg(out.len == 0, "%s: diagram %zu: %zu bytes left in out", rel, i, out.len);
            ck_assert_msg(c.all.len == whole.len && memcmp(c.all.buf, whole.buf, whole.len) == 0,
                          "%s: diagram %zu (variant %d): the sink got other bytes", rel, i, variant);
            size_t lines = 0;
            for (size_t b = 0; b < whole.len; b++)
                lines += whole.buf[b] == '\n';
            /* the header lines come in one piece; then a piece a node or edge */
            ck_assert_msg(variant == 3 || lines < 12 || c.puts > lines / 4, "%s: diagram %zu: %zu pieces for %zu lines",
                          rel, i, c.puts, lines);
            cg_strbuf_release(&whole);
            cg_strbuf_release(&out);
            cg_strbuf_release(&c.all);
        }
    }
    cg_project_release(&p);
}

START_TEST(sink_same_bytes)
{
    check_sink("tests/bases/graph");
    check_sink(".");
    check_sink("tests/golden/graph-limit/in");
}
END_TEST

START_TEST(collapse_counts)
{
    cg_project p;
    load(&p, "tests/bases/graph");
    static const char *const collapse[] = {"python", "numpy"};
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    o.collapse = collapse;
    o.ncollapse = 2;
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_dot_tree(&p.m, 0, &o, &sb);
    dotg g;
    dot_parse(&g, sb.buf);
    ck_assert_uint_eq(dot_leaves(&g), distinct_keys(&p, 0, collapse, 2, -1));
    ck_assert_ptr_nonnull(strstr(sb.buf, "\"python: 2 values\""));
    ck_assert_ptr_nonnull(strstr(sb.buf, "2 cells, 4 jobs"));
    dot_free(&g);
    /* the nightly job graph: setup + one node per phase and collapsed cell */
    cg_strbuf_reset(&sb);
    cg_dot_workflow(&p.m, 1, &o, &sb);
    dot_parse(&g, sb.buf);
    size_t want = 1;
    for (size_t ph = 0; ph < p.m.trees[0]->nphases; ph++)
        want += distinct_keys(&p, 0, collapse, 2, (int)ph);
    ck_assert_uint_eq(g.nodes, want);
    ck_assert_ptr_nonnull(strstr(sb.buf, "\\n2 jobs\""));
    dot_free(&g);
    cg_strbuf_release(&sb);
    cg_project_release(&p);
}
END_TEST

START_TEST(node_limit)
{
    cg_project p;
    load(&p, "tests/bases/graph");
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    o.max_nodes = 5;
    o.fit_px = 0; /* as asked (fitted, it would collapse to fit) */
    for (int kind = 0; kind < 2; kind++) {
        cg_strbuf sb = CG_STRBUF_INIT;
        if (kind == 0)
            cg_dot_tree(&p.m, 0, &o, &sb);
        else
            cg_dot_workflow(&p.m, 0, &o, &sb);
        dotg g;
        dot_parse(&g, sb.buf);
        ck_assert_uint_eq(g.nodes, 1);
        ck_assert_uint_eq(g.edges, 0);
        ck_assert_ptr_nonnull(strstr(sb.buf, "more than the limit of 5"));
        ck_assert_ptr_nonnull(strstr(sb.buf, "--max-nodes 0"));
        dot_free(&g);
        cg_strbuf_release(&sb);
    }
    /* the limit counts what is drawn: collapsed, the tree fits in 12 */
    static const char *const collapse[] = {"python", "numpy"};
    o.collapse = collapse;
    o.ncollapse = 2;
    o.max_nodes = 12;
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_dot_tree(&p.m, 0, &o, &sb);
    ck_assert_ptr_null(strstr(sb.buf, "\"note\""));
    cg_strbuf_reset(&sb);
    o.max_nodes = 11;
    cg_dot_tree(&p.m, 0, &o, &sb);
    ck_assert_ptr_nonnull(strstr(sb.buf, "\"note\""));
    cg_strbuf_release(&sb);
    cg_project_release(&p);
}
END_TEST

START_TEST(byte_stable)
{
    cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    for (int round = 0; round < 2; round++) {
        cg_project p;
        load(&p, ".");
        cg_strbuf *sb = round ? &b : &a;
        cg_dot_output outs[16];
        size_t n = cg_dot_outputs(&p.m, &p.m.pool, outs, 16);
        ck_assert_uint_eq(n, p.m.ntrees + p.m.manifest.nworkflows);
        for (size_t i = 0; i < n; i++)
            cg_strbuf_addf(sb, "%s\n%.*s", outs[i].rel, (int)outs[i].len, outs[i].data);
        cg_project_release(&p);
    }
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(memcmp(a.buf, b.buf, a.len) == 0);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
}
END_TEST

START_TEST(outputs)
{
    cg_project p;
    load(&p, "tests/bases/graph");
    cg_dot_output outs[4];
    size_t n = cg_dot_outputs(&p.m, &p.m.pool, outs, 1); /* says how many there are */
    ck_assert_uint_eq(n, 3);
    n = cg_dot_outputs(&p.m, &p.m.pool, outs, 4);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(outs[0].rel, "diagrams/tree-matrix.dot");
    ck_assert_str_eq(outs[1].rel, "diagrams/workflow-ci.dot");
    ck_assert_str_eq(outs[2].rel, "diagrams/workflow-nightly.dot");
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_dot_tree(&p.m, 0, &o, &sb);
    ck_assert_uint_eq(outs[0].len, sb.len);
    ck_assert(memcmp(outs[0].data, sb.buf, sb.len) == 0);
    cg_strbuf_release(&sb);
    for (size_t i = 0; i < n; i++) {
        ck_assert(cg_dot_is_generated(outs[i].data, outs[i].len));
        ck_assert(strncmp(outs[i].data, "// Generated by cigen from cigen.yml; do not edit.\n", 51) == 0);
    }
    ck_assert(!cg_dot_is_generated("digraph {}\n", 11));
    cg_project_release(&p);
    load(&p, "tests/golden/graph-limit/in"); /* no `diagrams:` */
    ck_assert_uint_eq(cg_dot_outputs(&p.m, &p.m.pool, outs, 4), 0);
    cg_project_release(&p);
}
END_TEST

/* The diagrams of a large matrix are drawn on a thread while the config is
 * rendered: the same bytes as drawn afterwards, on the caller's thread. */
START_TEST(drawn_beside_render_same_bytes)
{
    char *tmp = tu_big_project();
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/p", tmp);
    cg_strbuf got[2] = {CG_STRBUF_INIT, CG_STRBUF_INIT};
    for (int beside = 0; beside < 2; beside++) {
        cg_project p;
        cg_project_init(&p);
        cg_options o = {.dir = dir.buf};
        cg_error err;
        cg_error_init(&err);
        p.draw_diagrams = beside;
        ck_assert_msg(cg_project_load(&p, &o, &err) == 0 && cg_project_render(&p, &err) == 0, "%s",
                      cg_strbuf_str(&err.text));
        ck_assert(p.m.jobs.n >= 10000); /* large enough for the thread */
        ck_assert(p.drawn == (beside == 1));
        const cg_dot_output *d;
        size_t n = cg_project_diagrams(&p, &d);
        ck_assert_uint_eq(n, 2);
        for (size_t i = 0; i < n; i++)
            cg_strbuf_addf(&got[beside], "%s\n%.*s", d[i].rel, (int)d[i].len, d[i].data);
        cg_error_release(&err);
        cg_project_release(&p);
    }
    ck_assert_uint_eq(got[0].len, got[1].len);
    ck_assert(memcmp(got[0].buf, got[1].buf, got[0].len) == 0);
    cg_strbuf_release(&got[0]);
    cg_strbuf_release(&got[1]);
    cg_strbuf_release(&dir);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

/* Each diagram the repository commits, and each an example's project would
 * write, fits about one screen as Graphviz draws it: at most 2000 px on its
 * long side with `dot -Tpng`.  Skipped without Graphviz. */
START_TEST(diagrams_fit_a_screen)
{
    tu_run r = tu_sh(tu_srcdir(),
                     "command -v dot >/dev/null 2>&1 || { echo skipped; exit 0; }\n"
                     "set -e\n"
                     "tmp=$(mktemp -d)\n"
                     "trap 'rm -rf \"$tmp\"' EXIT\n"
                     "files=$(ls diagrams/*.dot)\n"
                     "for ex in examples/*/; do\n"
                     "  name=$(basename \"$ex\")\n"
                     "  cp -R \"$ex\" \"$tmp/$name\"\n"
                     "  printf '\\ndiagrams: d\\n' >> \"$tmp/$name/cigen.yml\"\n"
                     "  $CIGEN -q -C \"$tmp/$name\" generate --force >/dev/null\n"
                     "  files=\"$files $(ls \"$tmp/$name\"/d/*.dot)\"\n"
                     "done\n"
                     "n=0\n"
                     "for f in $files; do\n"
                     "  dot -Tpng \"$f\" -o \"$tmp/out.png\"\n"
                     "  size=$(od -An -tu1 -j16 -N8 \"$tmp/out.png\" | awk '{print ($1*16777216+$2*65536+$3*256+$4) \" \" ($5*16777216+$6*65536+$7*256+$8)}')\n"
                     "  set -- $size\n"
                     "  echo \"$f $1x$2\"\n"
                     "  if [ \"$1\" -gt 2000 ] || [ \"$2\" -gt 2000 ]; then echo \"TOO BIG: $f $1x$2\"; fi\n"
                     "  n=$((n + 1))\n"
                     "done\n"
                     "echo \"rendered $n\"\n");
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    if (strstr(r.out, "skipped") == r.out) {
        tu_run_free(&r);
        return;
    }
    ck_assert_msg(strstr(r.out, "TOO BIG") == NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "rendered ") && !strstr(r.out, "rendered 0\n"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "diagrams/workflow-ci.dot") && strstr(r.out, "/d/tree-"), "%s", r.out);
    tu_run_free(&r);
}
END_TEST

/* ---- cigen graph ---- */

static tu_run graph(const char *cwd, const char *args)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s/tests/bases/graph' graph %s", tu_srcdir(), args);
    tu_run r = tu_sh(cwd, cmd.buf);
    cg_strbuf_release(&cmd);
    return r;
}

START_TEST(cli_usage)
{
    static const struct {
        const char *args, *message;
    } bad[] = {
        {"--tree matrix --workflow ci", "give one --tree or one --workflow"},
        {"--format gif", "--format must be dot, svg or png, not 'gif'"},
        {"--max-nodes many", "--max-nodes wants a number, not 'many'"},
        {"--workflow nightlyy", "no workflow is named 'nightlyy' (did you mean 'nightly'?)"},
        {"--workflow zzz", "no workflow is named 'zzz' (workflows: ci, nightly)"},
        {"--tree matrix --collapse pyton", "tree 'matrix' has no dimension 'pyton' (did you mean 'python'?)"},
        {"matrix", "graph takes no arguments ('matrix')"},
    };
    for (size_t i = 0; i < CG_ARRAY_LEN(bad); i++) {
        tu_run r = graph(NULL, bad[i].args);
        ck_assert_msg(r.status == 2, "graph %s: status %d", bad[i].args, r.status);
        ck_assert_msg(r.out_len == 0, "graph %s printed %s", bad[i].args, r.out);
        ck_assert_msg(strstr(r.err, bad[i].message), "graph %s: %s", bad[i].args, r.err);
        tu_run_free(&r);
    }
    tu_run r = graph(NULL, "--help");
    ck_assert_int_eq(r.status, 0);
    static const char *const documented[] = {"--tree", "--workflow", "--collapse", "--max-nodes", "--format",
                                             "-o, --output", "CIGEN_DOT", "not to -C", "diagrams:"};
    for (size_t i = 0; i < CG_ARRAY_LEN(documented); i++)
        ck_assert_msg(strstr(r.out, documented[i]), "--help does not mention %s", documented[i]);
    tu_run_free(&r);
}
END_TEST

START_TEST(cli_output_relative_to_cwd)
{
    char *tmp = tu_mkdtemp();
    tu_run r = graph(tmp, "--workflow ci -o ci.dot");
    ck_assert_msg(r.status == 0 && r.out_len == 0, "status %d: %s", r.status, r.err);
    cg_strbuf path = CG_STRBUF_INIT;
    cg_strbuf_addf(&path, "%s/ci.dot", tmp);
    size_t len;
    char *data = tu_read(path.buf, &len);
    ck_assert_msg(data != NULL, "-o did not write ci.dot in the current folder");
    ck_assert(cg_dot_is_generated(data, len));
    ck_assert_ptr_nonnull(strstr(data, "digraph \"workflow-ci\""));
    cg_strbuf_reset(&path);
    cg_strbuf_addf(&path, "%s/tests/bases/graph/ci.dot", tu_srcdir());
    ck_assert_msg(!tu_exists(path.buf), "-o wrote into the -C folder");
    free(data);
    cg_strbuf_release(&path);
    tu_run_free(&r);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

/* DOT on stdout is written as it is drawn: a diagram larger than a chunk
 * comes out whole (the same bytes as -o writes), and one that cannot be
 * written is an error, never a silent success. */
START_TEST(cli_streamed_stdout)
{
    char *tmp = tu_big_project();
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C p graph --max-nodes 0 --collapse none > out.dot && "
                         "$CIGEN -C p graph --max-nodes 0 --collapse none -o file.dot && cmp out.dot file.dot && "
                         "test \"$(wc -c < out.dot)\" -gt %d",
                   2 * CG_DOT_CHUNK);
    tu_run r = tu_sh(tmp, cmd.buf);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = tu_sh(tmp, "$CIGEN -C p graph --max-nodes 0 --collapse none > /dev/full");
    ck_assert_msg(r.status == 2, "exit %d", r.status);
    ck_assert_msg(strstr(r.err, "cigen: error: cannot write the diagram: No space left on device\n"), "%s", r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

START_TEST(cli_svg_with_graphviz)
{
    tu_run probe = tu_sh(NULL, "command -v dot");
    bool have = probe.status == 0;
    tu_run_free(&probe);
    if (!have)
        return; /* Graphviz is optional */
    static const char *const args[] = {"--format svg", "--workflow ci --format svg", "--format png"};
    for (size_t i = 0; i < CG_ARRAY_LEN(args); i++) {
        tu_run r = graph(NULL, args[i]);
        ck_assert_msg(r.status == 0 && r.err_len == 0, "graph %s: status %d: %s", args[i], r.status, r.err);
        ck_assert_msg(i == 2 ? r.out_len > 8 && memcmp(r.out, "\x89PNG", 4) == 0 : strstr(r.out, "<svg") != NULL,
                      "graph %s: not the expected format", args[i]);
        tu_run_free(&r);
    }
}
END_TEST

/* A node id's component: the bytes that separate components, and control
 * bytes, are percent-encoded; a collapsed value is '*'.  (No dimension
 * value holds a control byte any more, the tree refuses one: this keeps
 * the encoding honest on its own.) */
START_TEST(path_add_encodes)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_dot_path_add(&sb, 0, "os", "linux");
    cg_dot_path_add(&sb, 0, "v", "a/b=c*d#e:f%g");
    cg_dot_path_add(&sb, 0, "n", "two\nlines\x1b\x7f");
    cg_dot_path_add(&sb, 0, "py", NULL);
    cg_dot_path_add(&sb, 0, "q", "say \"hi\" back\\slash caf\xc3\xa9");
    ck_assert_str_eq(sb.buf, "os=linux/v=a%2Fb%3Dc%2Ad%23e%3Af%25g/n=two%0Alines%1B%7F/py=*/"
                             "q=say \"hi\" back\\slash caf\xc3\xa9");
    cg_strbuf_reset(&sb);
    cg_strbuf_adds(&sb, "prefix:");
    cg_dot_path_add(&sb, 7, "os", "linux"); /* the path starts after the prefix: no leading '/' */
    cg_dot_path_add(&sb, 7, "py", "3.8");
    ck_assert_str_eq(sb.buf, "prefix:os=linux/py=3.8");
    cg_strbuf_release(&sb);
}
END_TEST

Suite *make_dot_suite(void)
{
    Suite *s = suite_create("dot");
    TCase *tc = tcase_create("escaping");
    tcase_add_loop_test(tc, quote_table, 0, (int)CG_ARRAY_LEN(quotes));
    tcase_add_test(tc, quote_round_trip);
    tcase_add_test(tc, path_add_encodes);
    suite_add_tcase(s, tc);
    tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, counts_small);
    tcase_add_test(tc, counts_default);
    tcase_add_test(tc, counts_large);
    tcase_add_test(tc, collapse_counts);
    tcase_add_test(tc, node_limit);
    tcase_add_test(tc, byte_stable);
    tcase_add_test(tc, sink_same_bytes);
    tcase_add_test(tc, outputs);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, drawn_beside_render_same_bytes);
    tcase_add_test(tc, cli_usage);
    tcase_add_test(tc, cli_output_relative_to_cwd);
    tcase_add_test(tc, cli_svg_with_graphviz);
    tcase_add_test(tc, cli_streamed_stdout);
    tcase_add_test(tc, diagrams_fit_a_screen);
    suite_add_tcase(s, tc);
    return s;
}
