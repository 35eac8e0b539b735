#include "render/assemble.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "base/util.h"

void cg_linemap_release(cg_linemap *map)
{
    free(map->v);
    memset(map, 0, sizeof *map);
}

void cg_linemap_add(cg_linemap *map, uint32_t *line, const char *text, size_t len,
                    const char *file, uint32_t src_line, int32_t job, int32_t workflow)
{
    uint32_t n = (uint32_t)cg_count_newlines(text, len);
    if (n == 0)
        return;
    cg_grow(&map->v, &map->cap, map->n + 1, sizeof *map->v);
    map->v[map->n++] = (cg_linemap_entry){*line, n, file, src_line, job, workflow};
    *line += n;
}

const cg_linemap_entry *cg_linemap_find(const cg_linemap *map, uint32_t line)
{
    size_t lo = 0, hi = map->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cg_linemap_entry *e = &map->v[mid];
        if (line < e->out_line)
            hi = mid;
        else if (line >= e->out_line + e->nlines)
            lo = mid + 1;
        else
            return e;
    }
    return NULL;
}

typedef struct part {
    size_t frag, sec;
} part;

typedef struct key_parts {
    const char *key;
    part *parts;
    size_t n, cap;
} key_parts;

typedef struct writer {
    cg_strbuf *out;
    cg_linemap *map;
    uint32_t line;
    /* the line of an offset in the fragment last copied from: sections are
     * mostly copied in file order, so counting goes on from there */
    const cg_fragment *at_frag;
    size_t at_off;
    uint32_t at_line;
    /* what was written last ends a keep ('|+') block scalar: a blank line
     * now would join its value, so blank lines are left out until a line
     * that is not blank has been written */
    bool keep_open;
} writer;

/* How many bytes of blank lines s[0..n) starts with (all of them while
 * W->keep_open; a text of blank lines only leaves it open). */
static size_t skip_blank_lines(writer *W, const char *s, size_t n)
{
    if (!W->keep_open)
        return 0;
    size_t skip = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            skip = i + 1;
        else if (s[i] != ' ' && s[i] != '\r')
            break;
    }
    if (skip < n)
        W->keep_open = false;
    return skip;
}

static uint32_t line_of(writer *W, const cg_fragment *f, size_t offset)
{
    if (offset > f->len)
        offset = f->len;
    if (W->at_frag != f || W->at_off > offset) {
        W->at_frag = f;
        W->at_off = 0;
        W->at_line = 1;
    }
    W->at_line += (uint32_t)cg_count_newlines(f->text + W->at_off, offset - W->at_off);
    W->at_off = offset;
    return W->at_line;
}

static void put(writer *W, const cg_fragment *f, size_t from, size_t to)
{
    if (to > from)
        from += skip_blank_lines(W, f->text + from, to - from);
    if (to <= from)
        return;
    cg_strbuf_add(W->out, f->text + from, to - from);
    bool add_nl = f->text[to - 1] != '\n';
    if (add_nl)
        cg_strbuf_addc(W->out, '\n');
    size_t len = to - from + add_nl;
    cg_linemap_add(W->map, &W->line, W->out->buf + W->out->len - len, len, f->file,
                   line_of(W, f, from), -1, -1);
}

static void put_text(writer *W, const char *s, size_t n)
{
    size_t skip = skip_blank_lines(W, s, n);
    s += skip;
    n -= skip;
    cg_strbuf_add(W->out, s, n);
    cg_linemap_add(W->map, &W->line, s, n, NULL, 0, -1, -1);
}

/* Adds the entries of fb's section to `seen` (entry name -> the part that
 * defined it first, + 1): an entry already there is an error.  One map per
 * section key, so many fragments cost linear time, not a pass over every
 * fragment before. */
static int check_entries(const cg_assembly *in, const part *parts, size_t j, cg_map *seen, cg_error *err)
{
    const cg_fragment *fb = &in->fragments[parts[j].frag];
    const cg_section *sb = &fb->sections[parts[j].sec];
    json_t *b = json_object_get(cg_doc_root(fb->doc), sb->key);
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v) {
        uintptr_t q1 = (uintptr_t)cg_map_put_new(seen, k, (void *)(uintptr_t)(j + 1));
        if (!q1)
            continue;
        const cg_fragment *fa = &in->fragments[parts[q1 - 1].frag];
        const cg_section *sa = &fa->sections[parts[q1 - 1].sec];
        cg_strbuf p = CG_STRBUF_INIT;
        cg_path_join_key(&p, "", sa->key);
        cg_pos first = cg_key_pos(fa->doc, p.buf, k);
        cg_pos again = cg_key_pos(fb->doc, p.buf, k);
        cg_strbuf_release(&p);
        cg_error_at(err, &again, "'%s' is defined under '%s' in two fragments", k, sa->key);
        cg_error_note(err, &first, "first defined here");
        return -1;
    }
    return 0;
}

static int check_anchors(const cg_assembly *in, cg_error *err)
{
    cg_map seen;
    cg_map_init(&seen);
    int rc = 0;
    for (size_t f = 0; f < in->nfragments && rc == 0; f++) {
        const cg_doc *doc = in->fragments[f].doc;
        size_t n = cg_doc_anchor_count(doc);
        for (size_t i = 0; i < n && rc == 0; i++) {
            cg_pos pos;
            const char *name = cg_doc_anchor(doc, i, &pos);
            size_t other = (size_t)cg_map_get(&seen, name);
            if (other && other - 1 != f) {
                const cg_doc *od = in->fragments[other - 1].doc;
                for (size_t j = 0; j < cg_doc_anchor_count(od); j++) {
                    cg_pos op;
                    if (cg_streq(cg_doc_anchor(od, j, &op), name)) {
                        rc = cg_error_at(err, &pos, "anchor '&%s' is also defined in another fragment; "
                                         "in config.yml the later one would silently replace it", name);
                        cg_error_note(err, &op, "defined here first");
                        break;
                    }
                }
            }
            if (!other)
                cg_map_put(&seen, name, (void *)(f + 1));
        }
    }
    cg_map_release(&seen);
    return rc;
}

/* ---- the order of the top-level keys ---- */

static bool pos_before(const cg_pos *a, const cg_pos *b)
{
    return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* The line span of one top-level section, and its key (index in keys). */
typedef struct span {
    uint32_t first, last;
    int key;
} span;

/* The key of the span holding `line` (spans are in file order), or -1. */
static int key_at(const span *spans, size_t n, uint32_t line)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (line < spans[mid].first)
            hi = mid;
        else if (line > spans[mid].last)
            lo = mid + 1;
        else
            return spans[mid].key;
    }
    return -1;
}

typedef struct use {
    int def, user;  /* keys: `user` holds an alias of an anchor under `def` */
    cg_pos alias;
    const char *name;
} use;

typedef struct use_list {
    use *v;
    size_t n, cap;
    cg_map pairs;  /* "def user" of the uses in v: one use per pair of keys */
    cg_pool pool;
} use_list;

/* The line spans of fragment f's sections, each with its key. */
static span *fragment_spans(const cg_assembly *in, const key_parts *keys, size_t nkeys, size_t f)
{
    const cg_fragment *fr = &in->fragments[f];
    span *spans = cg_xcalloc(fr->nsections + 1, sizeof *spans);
    size_t at = 0;
    uint32_t line = 1;
    for (size_t k = 0; k < fr->nsections; k++) {
        const cg_section *s = &fr->sections[k];
        size_t last = s->end > s->start ? s->end - 1 : s->start;
        line += (uint32_t)cg_count_newlines(fr->text + at, s->start - at);
        spans[k].first = line;
        line += (uint32_t)cg_count_newlines(fr->text + s->start, last - s->start);
        spans[k].last = line;
        at = last;
        spans[k].key = -1;
    }
    for (size_t i = 0; i < nkeys; i++)
        for (size_t j = 0; j < keys[i].n; j++)
            if (keys[i].parts[j].frag == f)
                spans[keys[i].parts[j].sec].key = (int)i;
    return spans;
}

/* The key holding the last anchor `name` of an earlier fragment's document
 * `source` (an alias of fragment f names it), or -1. */
static int foreign_anchor_key(const cg_assembly *in, span *const *spans, size_t f, const cg_doc *source,
                              const char *name)
{
    for (size_t g = 0; g < f; g++) {
        const cg_fragment *fr = &in->fragments[g];
        if (fr->doc != source)
            continue;
        int key = -1;
        for (size_t k = 0; k < cg_doc_anchor_count(source); k++) {
            cg_pos kp;
            if (cg_streq(cg_doc_anchor(source, k, &kp), name))
                key = key_at(spans[g], fr->nsections, kp.line);
        }
        return key;
    }
    return -1;
}

/* The uses of fragment f that cross top-level keys, added to *U: aliases of
 * its own anchors, and of anchors of earlier fragments. */
static void cross_uses(const cg_assembly *in, span *const *spans, size_t f, use_list *U)
{
    const cg_fragment *fr = &in->fragments[f];
    const cg_doc *doc = fr->doc;
    size_t nal = cg_doc_alias_count(doc), nan = cg_doc_anchor_count(doc);
    size_t nspans = fr->nsections;
    /* both lists are in file order: walk them together, each alias meaning
     * the last anchor of its name before it */
    cg_map last_anchor; /* name -> key + 2 (1: outside every section) */
    cg_map_init(&last_anchor);
    for (size_t a = 0, k = 0; a < nal; a++) {
        cg_pos ap, kp;
        const char *name = cg_doc_alias(doc, a, &ap);
        for (; k < nan && (cg_doc_anchor(doc, k, &kp), pos_before(&kp, &ap)); k++)
            cg_map_put(&last_anchor, cg_doc_anchor(doc, k, NULL),
                       (void *)(intptr_t)(key_at(spans[f], nspans, kp.line) + 2));
        const cg_doc *source = cg_doc_alias_source(doc, a);
        intptr_t def = source ? foreign_anchor_key(in, spans, f, source, name)
                              : (intptr_t)cg_map_get(&last_anchor, name) - 2;
        int user = key_at(spans[f], nspans, ap.line);
        /* the same key: the earlier fragment's part of it is written first */
        if (def < 0 || user < 0 || def == user)
            continue;
        char pair[48];
        snprintf(pair, sizeof pair, "%d %d", (int)def, user);
        if (cg_map_get(&U->pairs, pair))
            continue;
        cg_map_put(&U->pairs, cg_intern(&U->pool, pair), (void *)1);
        cg_grow(&U->v, &U->cap, U->n + 1, sizeof *U->v);
        U->v[U->n++] = (use){(int)def, user, ap, name};
    }
    cg_map_release(&last_anchor);
}

/* Top-level keys go out in the order they first appear in the fragments,
 * except that a key holding an anchor goes before every key that uses it:
 * a fragment can define `foo: &foo` before its `jobs:` while an earlier
 * fragment put `jobs` first, and YAML wants the anchor before the alias.
 * Fills order[nkeys]; an error when two keys need each other. */
static int order_keys(const cg_assembly *in, const key_parts *keys, size_t nkeys, size_t *order, cg_error *err)
{
    use_list U = {0};
    cg_map_init(&U.pairs);
    cg_pool_init(&U.pool);
    span **spans = cg_xcalloc(in->nfragments + 1, sizeof *spans);
    for (size_t f = 0; f < in->nfragments; f++)
        spans[f] = fragment_spans(in, keys, nkeys, f);
    for (size_t f = 0; f < in->nfragments; f++)
        cross_uses(in, spans, f, &U);
    for (size_t f = 0; f < in->nfragments; f++)
        free(spans[f]);
    free(spans);
    const use *uses = U.v;
    size_t nuses = U.n;
    /* Kahn's order, always taking the first ready key: how many anchors'
     * keys each key waits for, and the uses grouped by the key they wait for */
    size_t *waits = cg_xcalloc(nkeys + 1, sizeof *waits), *from = cg_xcalloc(nkeys + 2, sizeof *from);
    size_t *by_def = cg_xcalloc(nuses + 1, sizeof *by_def);
    for (size_t u = 0; u < nuses; u++) {
        waits[uses[u].user]++;
        from[uses[u].def + 1]++;
    }
    for (size_t i = 0; i < nkeys; i++)
        from[i + 1] += from[i];
    size_t *fill = cg_xcalloc(nkeys + 1, sizeof *fill);
    for (size_t u = 0; u < nuses; u++)
        by_def[from[uses[u].def] + fill[uses[u].def]++] = u;
    bool *placed = cg_xcalloc(nkeys + 1, sizeof *placed);
    int rc = 0;
    for (size_t n = 0; n < nkeys && rc == 0; n++) {
        size_t pick = 0;
        while (pick < nkeys && (placed[pick] || waits[pick]))
            pick++;
        if (pick == nkeys) {
            /* every key left waits for another: a cycle, through x and y */
            const use *x = &uses[0], *y = &uses[0];
            for (size_t u = 0; u < nuses; u++)
                if (!placed[uses[u].user] && !placed[uses[u].def]) {
                    x = &uses[u];
                    break;
                }
            for (size_t u = 0; u < nuses; u++)
                if (uses[u].user == x->def && !placed[uses[u].def]) {
                    y = &uses[u];
                    break;
                }
            rc = cg_error_at(err, &x->alias, "alias '*%s' in '%s' needs '%s' (where '&%s' is) written first in "
                             "config.yml, but '%s' needs '%s' first too", x->name, keys[x->user].key,
                             keys[x->def].key, x->name, keys[x->def].key, keys[y->def].key);
            cg_error_note(err, &y->alias, "'%s' uses '*%s' here; move one of these anchors to the top-level key "
                          "that uses it, or to a key of its own", keys[y->user].key, y->name);
            break;
        }
        placed[pick] = true;
        order[n] = pick;
        for (size_t e = from[pick]; e < from[pick + 1]; e++)
            waits[uses[by_def[e]].user]--;
    }
    free(waits);
    free(from);
    free(by_def);
    free(fill);
    free(placed);
    free(U.v);
    cg_map_release(&U.pairs);
    cg_pool_release(&U.pool);
    return rc;
}

int cg_assemble(const cg_assembly *in, cg_strbuf *out, cg_linemap *map, cg_error *err)
{
    key_parts *keys = NULL;
    size_t nkeys = 0, keys_cap = 0;
    int rc = 0;
    cg_map key_index; /* key -> index in keys + 1 */
    cg_map_init(&key_index);
    for (size_t f = 0; f < in->nfragments; f++) {
        const cg_fragment *fr = &in->fragments[f];
        for (size_t s = 0; s < fr->nsections; s++) {
            const char *k = fr->sections[s].key;
            size_t i = (size_t)cg_map_get(&key_index, k);
            if (i-- == 0) {
                i = nkeys;
                cg_grow(&keys, &keys_cap, nkeys + 1, sizeof *keys);
                keys[nkeys++] = (key_parts){k, NULL, 0, 0};
                cg_map_put(&key_index, k, (void *)(i + 1));
            }
            cg_grow(&keys[i].parts, &keys[i].cap, keys[i].n + 1, sizeof *keys[i].parts);
            keys[i].parts[keys[i].n++] = (part){f, s};
        }
    }
    /* every repeated section must be combinable */
    for (size_t i = 0; i < nkeys && rc == 0; i++) {
        key_parts *kp = &keys[i];
        bool gen = cg_streq(kp->key, "workflows") && in->nworkflows;
        const cg_fragment *f0 = &in->fragments[kp->parts[0].frag];
        const cg_section *s0 = &f0->sections[kp->parts[0].sec];
        if (kp->n == 1 && !gen)
            continue;
        cg_map seen;
        cg_map_init(&seen);
        for (size_t j = 0; j < kp->n && rc == 0; j++) {
            const cg_fragment *fj = &in->fragments[kp->parts[j].frag];
            const cg_section *sj = &fj->sections[kp->parts[j].sec];
            if (sj->merge_pos.line) {
                rc = cg_error_at(err, &sj->merge_pos, "a merge key ('<<') cannot be combined with the '%s' of %s; "
                                 "write its entries out", kp->key,
                                 gen && kp->n == 1 ? "the generated workflows" : "other fragments");
                break;
            }
            if (!sj->mergeable && !json_is_object(json_object_get(cg_doc_root(fj->doc), kp->key))) {
                /* a scalar or list section such as 'version': nothing to combine */
                if (gen && kp->n == 1) {
                    rc = cg_error_at(err, &sj->key_pos, "'%s' is generated from the manifest; remove it here",
                                     kp->key);
                } else {
                    const part *again = &kp->parts[j ? j : 1];
                    rc = cg_error_at(err, &in->fragments[again->frag].sections[again->sec].key_pos,
                                     "'%s' is set in two fragments; set it in one", kp->key);
                    cg_error_note(err, &s0->key_pos, "first set here");
                }
                break;
            }
            if (!sj->mergeable) {
                rc = cg_error_at(err, &sj->key_pos,
                                 "'%s' appears in %s, so its entries must be a block mapping "
                                 "(one entry per line, no anchor on the key) to be combined",
                                 kp->key, gen && kp->n == 1 ? "a fragment and is generated too" : "several fragments");
                break;
            }
            unsigned want = gen ? 2 : s0->indent;
            if (sj->indent != want) {
                rc = cg_error_at(err, &sj->key_pos,
                                 "the entries of '%s' are indented by %u spaces here but by %u %s; "
                                 "combined sections need the same indentation",
                                 kp->key, sj->indent, want, gen ? "in the generated workflows" : "in the first fragment");
                break;
            }
            rc = check_entries(in, kp->parts, j, &seen, err);
            if (gen && rc == 0) {
                json_t *entries = json_object_get(cg_doc_root(fj->doc), kp->key);
                json_t *ver = json_object_get(entries, "version");
                if (ver && !json_is_object(ver)) { /* (a mapping is a workflow named 'version': lint's) */
                    /* CircleCI 2.0's `version: 2` goes first, once: the manifest writes it */
                    cg_pos vp = cg_key_pos(fj->doc, "/workflows", "version");
                    if (in->workflows_version_pos) {
                        rc = cg_error_at(err, &vp, "'version' under 'workflows' is set here and in the manifest; "
                                         "remove it here (the manifest's is written first, once)");
                        cg_error_note(err, in->workflows_version_pos, "set in the manifest here");
                    } else {
                        rc = cg_error_at(err, &vp, "'version' under 'workflows' of a fragment would be written "
                                         "among the generated workflows; move it to the manifest's 'workflows' "
                                         "(version: 2), which writes it first");
                    }
                }
                for (size_t w = 0; w < in->nworkflows && rc == 0; w++) {
                    if (!json_object_get(entries, in->workflow_names[w]))
                        continue;
                    cg_pos wp = cg_key_pos(fj->doc, "/workflows", in->workflow_names[w]);
                    rc = cg_error_at(err, &wp, "workflow '%s' is both verbatim here and declared in the manifest",
                                     in->workflow_names[w]);
                    cg_error_note(err, &in->workflow_pos[w], "declared here");
                }
            }
        }
        cg_map_release(&seen);
    }
    if (rc == 0)
        rc = check_anchors(in, err);
    size_t *order = cg_xcalloc(nkeys + 1, sizeof *order);
    if (rc == 0)
        rc = order_keys(in, keys, nkeys, order, err);
    if (rc == 0) {
        size_t body0 = out->len; /* out may hold a header already: the body starts here */
        writer W = {out, map, 1, NULL, 0, 0, false};
        put_text(&W, in->header, strlen(in->header));
        bool have_workflows = false;
        for (size_t i = 0; i < nkeys; i++) {
            key_parts *kp = &keys[order[i]];
            for (size_t j = 0; j < kp->n; j++) {
                const cg_fragment *f = &in->fragments[kp->parts[j].frag];
                const cg_section *s = &f->sections[kp->parts[j].sec];
                if (j == 0) {
                    put(&W, f, s->start, s->end);
                    W.keep_open = s->keep_end;
                    continue;
                }
                put(&W, f, s->start, s->key_start);
                if (s->key_comment) {
                    W.keep_open = false;
                    cg_strbuf line = CG_STRBUF_INIT;
                    cg_strbuf_addspaces(&line, s->indent);
                    cg_strbuf_adds(&line, s->key_comment);
                    cg_strbuf_addc(&line, '\n');
                    cg_strbuf_add(W.out, line.buf, line.len);
                    cg_linemap_add(W.map, &W.line, line.buf, line.len, f->file, s->key_line, -1, -1);
                    cg_strbuf_release(&line);
                }
                put(&W, f, s->body, s->end);
                W.keep_open = s->keep_end;
            }
            if (cg_streq(kp->key, "workflows") && in->nworkflows) {
                have_workflows = true;
                if (out->len - body0 >= 2 && !(out->buf[out->len - 1] == '\n' && out->buf[out->len - 2] == '\n'))
                    put_text(&W, "\n", 1);
                if ((rc = in->write_workflows(in->ctx, out, map, &W.line)) != 0)
                    break;
            }
        }
        if (rc == 0 && !have_workflows && in->nworkflows) {
            if (out->len > body0 && !(out->len - body0 >= 2 && out->buf[out->len - 2] == '\n'))
                put_text(&W, "\n", 1);
            put_text(&W, "workflows:\n", 11);
            rc = in->write_workflows(in->ctx, out, map, &W.line);
        }
    }
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i].parts);
    free(keys);
    free(order);
    cg_map_release(&key_index);
    return rc;
}
