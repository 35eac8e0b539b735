#include "model/special.h"

#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "base/util.h"
#include "lang/yamlload.h"

static const char header_key[] = "# cigen-special: ";

void cg_special_init(cg_special *s)
{
    memset(s, 0, sizeof *s);
}

void cg_special_release(cg_special *s)
{
    for (size_t i = 0; i < s->nonly; i++)
        free(s->only[i]);
    for (size_t i = 0; i < s->nalso; i++)
        free(s->also[i]);
    free(s->only);
    free(s->also);
    free(s->only_pos);
    free(s->also_pos);
    for (size_t i = 0; i < s->nstay; i++)
        free(s->stay[i]);
    free(s->stay);
    free(s->source);
    free(s->overlay);
    free(s->reason);
    free(s->branch);
    cg_special_init(s);
}

bool cg_special_empty(const cg_special *s)
{
    return s->nonly == 0 && s->nalso == 0;
}

void cg_special_add(cg_special *s, bool only, const char *pattern, const cg_pos *pos)
{
    char ***v = only ? &s->only : &s->also;
    cg_pos **p = only ? &s->only_pos : &s->also_pos;
    size_t *n = only ? &s->nonly : &s->nalso;
    *v = cg_xrealloc(*v, (*n + 1) * sizeof **v);
    *p = cg_xrealloc(*p, (*n + 1) * sizeof **p);
    (*v)[*n] = cg_xstrdup(pattern);
    (*p)[*n] = pos ? *pos : (cg_pos){0};
    (*n)++;
}

void cg_special_add_stay(cg_special *s, const char *pattern)
{
    s->stay = cg_xrealloc(s->stay, (s->nstay + 1) * sizeof *s->stay);
    s->stay[s->nstay++] = cg_xstrdup(pattern);
}

static int add_list(cg_special *s, bool only, const cg_doc *doc, const char *key, json_t *v, cg_error *err)
{
    cg_strbuf p = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    cg_path_join_key(&p, "", key);
    int rc = 0;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v)) {
        cg_pos pos = cg_doc_where(doc, p.buf);
        rc = cg_error_at(err, &pos, "'%s' must be a pattern or a list of patterns (strings like "
                         "\"os=linux,package=conda\" or \"binary_*_build\")", key);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        cg_path_join_index(&ip, p.buf, i);
        const char *path = json_is_array(v) ? ip.buf : p.buf;
        char what[64];
        snprintf(what, sizeof what, "a pattern in '%s'", key);
        if ((rc = cg_expect_nonempty(doc, path, item, what, err)) != 0)
            break;
        cg_pos pos = cg_doc_where(doc, path);
        cg_special_add(s, only, json_string_value(item), &pos);
    }
    cg_strbuf_release(&p);
    cg_strbuf_release(&ip);
    return rc;
}

int cg_special_parse(cg_special *s, const char *file, const char *text, size_t len, cg_error *err)
{
    cg_doc *doc = cg_doc_parse(file, text, len, NULL, err);
    if (!doc)
        return -1;
    json_t *root = cg_doc_root(doc);
    static const char *const keys[] = {"reason", "only", "also", "branch", "allow_protected"};
    int rc = 0;
    cg_pos top = {cg_doc_file(doc), 0, 0};
    if (!root)
        rc = cg_error_at(err, &top, "the overlay is empty; remove it, or give 'only' or 'also'");
    else if (cg_expect_object(doc, "", root, "a special-PR overlay", err) != 0 ||
             cg_check_keys(doc, "", root, keys, CG_ARRAY_LEN(keys), "in a special-PR overlay", err) != 0)
        rc = -1;
    json_t *v;
    if (rc == 0 && (v = json_object_get(root, "reason")) &&
        cg_expect_string(doc, "/reason", v, "'reason'", err) != 0)
        rc = -1;
    if (rc == 0 && (v = json_object_get(root, "branch"))) {
        cg_pos bp = cg_doc_where(doc, "/branch");
        const char *why;
        if (cg_expect_nonempty(doc, "/branch", v, "'branch'", err) != 0)
            rc = -1;
        else if ((why = cg_branch_name_problem(json_string_value(v))) != NULL)
            rc = cg_error_at(err, &bp, "'branch' must be a git branch name, and this is not one: %s", why);
        else {
            free(s->branch);
            s->branch = cg_xstrdup(json_string_value(v));
        }
    }
    if (rc == 0 && (v = json_object_get(root, "allow_protected"))) {
        const char *b = json_is_string(v) ? json_string_value(v) : "";
        if (!cg_streq(b, "true") && !cg_streq(b, "false")) {
            cg_pos bp = cg_doc_where(doc, "/allow_protected");
            rc = cg_error_at(err, &bp, "'allow_protected' must be true or false");
        } else
            s->allow_protected = cg_streq(b, "true");
    }
    if (rc == 0 && (v = json_object_get(root, "only")))
        rc = add_list(s, true, doc, "only", v, err);
    if (rc == 0 && (v = json_object_get(root, "also")))
        rc = add_list(s, false, doc, "also", v, err);
    if (rc == 0 && cg_special_empty(s)) {
        top = cg_doc_where(doc, "");
        rc = cg_error_at(err, &top, "the overlay selects nothing; give 'only' or 'also'");
    }
    if (rc == 0) {
        /* positions point into the doc's file name: keep a copy that outlives it */
        free(s->source);
        s->source = cg_xstrdup(file);
        free(s->overlay);
        s->overlay = cg_xstrdup(file);
        v = json_object_get(root, "reason");
        if (v && json_string_length(v)) {
            free(s->reason);
            s->reason = cg_xstrndup(json_string_value(v), json_string_length(v));
        }
        for (size_t i = 0; i < s->nonly; i++)
            s->only_pos[i].file = s->source;
        for (size_t i = 0; i < s->nalso; i++)
            s->also_pos[i].file = s->source;
    }
    cg_doc_free(doc);
    return rc;
}

void cg_special_args(const cg_special *s, cg_strbuf *out)
{
    for (size_t i = 0; i < s->nonly; i++) {
        cg_strbuf_adds(out, i ? " --only " : "--only ");
        cg_strbuf_add_shell_quoted(out, s->only[i]);
    }
    for (size_t i = 0; i < s->nalso; i++) {
        cg_strbuf_adds(out, s->nonly || i ? " --also " : "--also ");
        cg_strbuf_add_shell_quoted(out, s->also[i]);
    }
    if (s->allow_protected)
        cg_strbuf_adds(out, " --allow-protected");
    if (s->branch) {
        cg_strbuf_adds(out, " --pr-branch ");
        cg_strbuf_add_shell_quoted(out, s->branch);
    }
}

void cg_special_header(const cg_special *s, cg_strbuf *out)
{
    cg_strbuf_adds(out, "# This is a special-PR config: regenerate without the selection before landing.\n");
    if (s->reason) {
        /* one comment line, whatever the YAML string held: its line breaks
         * become spaces, other characters a comment cannot hold escapes */
        cg_strbuf_adds(out, "# Reason: ");
        cg_strbuf r = CG_STRBUF_INIT;
        for (const unsigned char *c = (const unsigned char *)s->reason; *c; c++) {
            size_t brk = *c == '\n' || *c == '\r' ? 1 : c[0] == 0xc2 && c[1] == 0x85 ? 2
                         : c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9) ? 3 : 0;
            if (brk) {
                cg_strbuf_addc(&r, ' ');
                c += brk - 1;
            } else {
                cg_strbuf_addc(&r, (char)*c);
            }
        }
        cg_strbuf_add_comment_text(out, cg_strbuf_str(&r));
        cg_strbuf_release(&r);
        cg_strbuf_addc(out, '\n');
    }
    /* patterns, branch and overlay are refused where they are read when a
     * comment cannot hold them (cg_line_breaker); escaped here too */
    cg_strbuf line = CG_STRBUF_INIT;
    cg_special_args(s, &line);
    /* check --allow-special reads this overlay again (or sees it is gone) */
    if (s->overlay) {
        cg_strbuf_adds(&line, " --overlay ");
        cg_strbuf_add_shell_quoted(&line, s->overlay);
    }
    cg_strbuf_adds(out, header_key);
    cg_strbuf_add_comment_text(out, cg_strbuf_str(&line));
    cg_strbuf_release(&line);
    cg_strbuf_addc(out, '\n');
}

/* Reads one shell-quoted word; returns the position after it or NULL. */
static const char *read_word(const char *p, const char *end, cg_strbuf *w)
{
    while (p < end && *p == ' ')
        p++;
    if (p >= end)
        return NULL;
    if (*p != '\'') {
        while (p < end && *p != ' ')
            cg_strbuf_addc(w, *p++);
        return p;
    }
    p++;
    for (;;) {
        while (p < end && *p != '\'')
            cg_strbuf_addc(w, *p++);
        if (p >= end)
            return NULL;
        p++;
        /* '\'' continues the word with a quote */
        if (end - p >= 3 && p[0] == '\\' && p[1] == '\'' && p[2] == '\'') {
            cg_strbuf_addc(w, '\'');
            p += 3;
            continue;
        }
        return p;
    }
}

bool cg_special_from_header(cg_special *s, const char *text, size_t len)
{
    static const char digest_key[] = "# cigen-digest: ";
    size_t i = 0;
    /* cigen's header ends with its digest line: a fragment's comments after
     * it are not read, whatever they say */
    while (i < len && text[i] == '#') {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t klen = sizeof header_key - 1;
        if (end - i >= sizeof digest_key - 1 && memcmp(text + i, digest_key, sizeof digest_key - 1) == 0)
            return false;
        if (end - i > klen && memcmp(text + i, header_key, klen) == 0) {
            const char *p = text + i + klen, *stop = text + end;
            cg_strbuf flag = CG_STRBUF_INIT, word = CG_STRBUF_INIT;
            bool ok = true;
            while (ok && p && p < stop) {
                cg_strbuf_reset(&flag);
                cg_strbuf_reset(&word);
                p = read_word(p, stop, &flag);
                if (!p)
                    break;
                if (cg_streq(flag.buf, "--allow-protected")) {
                    s->allow_protected = true;
                    continue;
                }
                p = read_word(p, stop, &word);
                ok = p && (cg_streq(flag.buf, "--only") || cg_streq(flag.buf, "--also") ||
                           (cg_streq(flag.buf, "--overlay") && !s->overlay) ||
                           (cg_streq(flag.buf, "--pr-branch") && !s->branch));
                if (ok && cg_streq(flag.buf, "--overlay"))
                    s->overlay = cg_xstrdup(word.buf ? word.buf : "");
                else if (ok && cg_streq(flag.buf, "--pr-branch"))
                    s->branch = cg_xstrdup(word.buf ? word.buf : "");
                else if (ok)
                    cg_special_add(s, cg_streq(flag.buf, "--only"), word.buf, NULL);
            }
            cg_strbuf_release(&flag);
            cg_strbuf_release(&word);
            if (ok && !cg_special_empty(s)) {
                free(s->source);
                s->source = cg_xstrdup("the header of the committed config");
                return true;
            }
            cg_special_release(s);
            return false;
        }
        i = end + 1;
    }
    return false;
}
