/* same — two YAML documents compared as data (see same.h). */
#include "audit/same.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"

typedef struct walker {
    const cg_doc *a, *b;
    const char *an, *bn;
    cg_strbuf *report;
    size_t max, n;
} walker;

/* A scalar as a YAML 1.1 reader sees it: its type, and a canonical text. */
typedef struct scalar {
    cg_scalar_type type;
    const char *text;
    size_t len;
    double num;
    bool have_num;
} scalar;

static scalar read_scalar(const cg_doc *doc, const char *path, json_t *v)
{
    scalar s = {CG_T_STR, json_string_value(v), json_string_length(v), 0, false};
    if (!cg_doc_is_plain(doc, path))
        return s;
    s.type = cg_yaml_resolve(s.text, s.len);
    if (s.type == CG_T_INT || s.type == CG_T_FLOAT) {
        char *end = NULL;
        const char *t = s.text;
        bool hex = (t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) ||
                   ((t[0] == '-' || t[0] == '+') && t[1] == '0' && (t[2] == 'x' || t[2] == 'X'));
        bool underscores = strchr(t, '_') != NULL || strchr(t, ':') != NULL;
        if (!underscores && !hex && s.type == CG_T_INT && !(t[0] == '0' && t[1]) &&
            !((t[0] == '-' || t[0] == '+') && t[1] == '0' && t[2])) {
            double d = strtod(t, &end);
            s.have_num = end && !*end;
            s.num = d;
        } else if (!underscores && !hex && s.type == CG_T_FLOAT && !strpbrk(t, "nN")) {
            double d = strtod(t, &end);
            s.have_num = end && !*end && isfinite(d);
            s.num = d;
        }
    }
    return s;
}

static bool bool_value(const char *t)
{
    return strchr("tTyY", t[0]) || ((t[0] == 'o' || t[0] == 'O') && (t[1] == 'n' || t[1] == 'N'));
}

static bool scalars_equal(const scalar *x, const scalar *y)
{
    if (x->type != y->type)
        return false;
    switch (x->type) {
    case CG_T_NULL:
        return true;
    case CG_T_BOOL:
        return bool_value(x->text) == bool_value(y->text);
    case CG_T_INT:
    case CG_T_FLOAT:
        if (x->have_num && y->have_num)
            return x->num == y->num;
        break;
    default:
        break;
    }
    /* a string, or a number this reader does not evaluate: the same text */
    return x->len == y->len && memcmp(x->text, y->text, x->len) == 0;
}

static void say(walker *W, const char *path, const char *a, const char *b)
{
    W->n++;
    if (W->n > W->max)
        return;
    cg_strbuf_adds(W->report, "  ");
    cg_strbuf_adds(W->report, *path ? path : "/");
    cg_strbuf_adds(W->report, ": ");
    cg_strbuf_adds(W->report, a);
    cg_strbuf_adds(W->report, b);
    cg_strbuf_addc(W->report, '\n');
}

static const char *kind(json_t *v)
{
    return json_is_object(v) ? "a mapping" : json_is_array(v) ? "a sequence" : "a scalar";
}

static void shown(cg_strbuf *out, const scalar *s)
{
    static const char *const types[] = {"string", "null", "boolean", "integer", "float", "timestamp"};
    cg_strbuf_addf(out, "%s ", types[s->type]);
    size_t n = s->len > 80 ? 80 : s->len;
    cg_yaml_quote(out, s->text, n);
    if (n < s->len)
        cg_strbuf_adds(out, "...");
}

static void walk(walker *W, const char *ap, json_t *a, const char *bp, json_t *b, const char *path)
{
    if (json_is_object(a) && json_is_object(b)) {
        cg_strbuf pa = CG_STRBUF_INIT, pb = CG_STRBUF_INIT, p = CG_STRBUF_INIT;
        const char *k;
        json_t *av;
        json_object_foreach(a, k, av) {
            cg_path_join_key(&p, path, k);
            json_t *bv = json_object_get(b, k);
            if (!bv) {
                say(W, p.buf, "only in ", W->an);
                continue;
            }
            cg_path_join_key(&pa, ap, k);
            cg_path_join_key(&pb, bp, k);
            char *pa_s = cg_xstrdup(pa.buf), *pb_s = cg_xstrdup(pb.buf), *p_s = cg_xstrdup(p.buf);
            walk(W, pa_s, av, pb_s, bv, p_s);
            free(pa_s);
            free(pb_s);
            free(p_s);
        }
        json_t *bv;
        json_object_foreach(b, k, bv) {
            if (json_object_get(a, k))
                continue;
            cg_path_join_key(&p, path, k);
            say(W, p.buf, "only in ", W->bn);
        }
        cg_strbuf_release(&pa);
        cg_strbuf_release(&pb);
        cg_strbuf_release(&p);
        return;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        if (na != nb) {
            char x[32], y[32];
            snprintf(x, sizeof x, "%zu", na);
            snprintf(y, sizeof y, "%zu", nb);
            cg_strbuf m = CG_STRBUF_INIT;
            cg_strbuf_addf(&m, "%s items in %s, ", x, W->an);
            cg_strbuf_addf(&m, "%s items in %s", y, W->bn);
            say(W, path, m.buf, "");
            cg_strbuf_release(&m);
        }
        cg_strbuf pa = CG_STRBUF_INIT, pb = CG_STRBUF_INIT, p = CG_STRBUF_INIT;
        for (size_t i = 0; i < na && i < nb; i++) {
            cg_path_join_index(&pa, ap, i);
            cg_path_join_index(&pb, bp, i);
            cg_path_join_index(&p, path, i);
            char *pa_s = cg_xstrdup(pa.buf), *pb_s = cg_xstrdup(pb.buf), *p_s = cg_xstrdup(p.buf);
            walk(W, pa_s, json_array_get(a, i), pb_s, json_array_get(b, i), p_s);
            free(pa_s);
            free(pb_s);
            free(p_s);
        }
        cg_strbuf_release(&pa);
        cg_strbuf_release(&pb);
        cg_strbuf_release(&p);
        return;
    }
    if (json_is_string(a) && json_is_string(b)) {
        scalar x = read_scalar(W->a, ap, a), y = read_scalar(W->b, bp, b);
        if (scalars_equal(&x, &y))
            return;
        cg_strbuf sx = CG_STRBUF_INIT, sy = CG_STRBUF_INIT;
        shown(&sx, &x);
        shown(&sy, &y);
        cg_strbuf m = CG_STRBUF_INIT;
        cg_strbuf_addf(&m, "%s in %s, ", sx.buf, W->an);
        cg_strbuf_addf(&m, "%s in %s", sy.buf, W->bn);
        say(W, path, m.buf, "");
        cg_strbuf_release(&m);
        cg_strbuf_release(&sx);
        cg_strbuf_release(&sy);
        return;
    }
    if (!a || !b) {
        say(W, path, "only in ", a ? W->an : W->bn);
        return;
    }
    cg_strbuf m = CG_STRBUF_INIT;
    cg_strbuf_addf(&m, "%s in %s, ", kind(a), W->an);
    cg_strbuf_addf(&m, "%s in %s", kind(b), W->bn);
    say(W, path, m.buf, "");
    cg_strbuf_release(&m);
}

size_t cg_yaml_same(const cg_doc *a, const char *a_name, const cg_doc *b, const char *b_name,
                    cg_strbuf *report, size_t max_lines)
{
    walker W = {a, b, a_name, b_name, report, max_lines, 0};
    json_t *ra = cg_doc_root(a), *rb = cg_doc_root(b);
    if (!ra || !rb) {
        if (ra || rb)
            say(&W, "", "empty in ", ra ? b_name : a_name);
        return W.n;
    }
    walk(&W, "", ra, "", rb, "");
    return W.n;
}
