/* cigen generate / cigen check */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"
#include "fsio.h"

void cg_cli_print_error(const cg_error *err)
{
    if (err->set)
        fprintf(stderr, "%s\n", cg_strbuf_str(&err->text));
}

int cg_cli_build(const cg_global *g, cg_project *p, bool render)
{
    cg_error err;
    cg_error_init(&err);
    int rc = cg_project_load(p, &g->opt, &err);
    if (rc == 0 && render)
        rc = cg_project_render(p, &err);
    if (p->warnings.count)
        fputs(cg_strbuf_str(&p->warnings.text), stderr);
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max)
{
    size_t n = 0;
    if (n < max)
        out[n++] = (cg_output_file){p->manifest.output, p->config.buf ? p->config.buf : "", p->config.len,
                                    p->manifest.output_pos};
    return n;
}

/* Generated workflows plus the ones fragments hold verbatim. */
static size_t count_workflows(const cg_project *p)
{
    size_t n = p->manifest.nworkflows;
    for (size_t i = 0; i < p->nfragments; i++) {
        json_t *w = json_object_get(cg_doc_root(p->fragments[i].doc), "workflows");
        if (json_is_object(w))
            n += json_object_size(w) - (json_object_get(w, "version") ? 1 : 0);
    }
    return n;
}

int cg_cmd_generate(const cg_global *g, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            puts("usage: cigen generate\n\nWrites config.yml (and the diagrams) from the sources the manifest names.");
            return 0;
        }
        return CG_EXIT_ERROR;
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: generate takes no arguments ('%s')\n", argv[optind]);
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, true);
    if (rc != 0) {
        cg_project_free(&p);
        return rc;
    }
    cg_output_file files[64];
    size_t n = cg_cli_outputs(&p, files, 64);
    cg_outputs outs;
    cg_outputs_init(&outs, p.root);
    cg_error err;
    cg_error_init(&err);
    size_t written = 0, bytes = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *old = NULL;
        size_t old_len = 0;
        int r = cg_read_output(p.root, files[i].rel, &old, &old_len, &err);
        bool same = r == 0 && old_len == files[i].len && memcmp(old, files[i].data, old_len) == 0;
        free(old);
        if (r < 0) {
            rc = CG_EXIT_ERROR;
            break;
        }
        const char *slash = strrchr(files[i].rel, '/');
        char *dir = slash ? strndup(files[i].rel, (size_t)(slash - files[i].rel)) : strdup(".");
        cg_remove_stale_temps(p.root, dir);
        free(dir);
        if (same)
            continue;
        if (cg_outputs_stage(&outs, files[i].rel, files[i].data, files[i].len, &files[i].ref, &err) != 0) {
            rc = CG_EXIT_ERROR;
            break;
        }
        written++;
        bytes += files[i].len;
    }
    if (rc == 0 && cg_outputs_commit(&outs, &err) != 0)
        rc = CG_EXIT_ERROR;
    cg_outputs_release(&outs);
    if (rc != 0) {
        cg_cli_print_error(&err);
    } else if (!g->quiet) {
        size_t nw = count_workflows(&p);
        printf("cigen: %s: %zu job%s in %zu workflow%s, %zu bytes; %s\n", p.manifest.output, p.jobs.n,
               p.jobs.n == 1 ? "" : "s", nw, nw == 1 ? "" : "s", p.config.len,
               written ? "written" : "already up to date");
        (void)bytes;
    }
    cg_error_release(&err);
    cg_project_free(&p);
    return rc;
}

int cg_cmd_check(const cg_global *g, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"full-diff", no_argument, NULL, 'F'}, {0}};
    int c;
    bool full = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            puts("usage: cigen check [--full-diff]\n\nExits 0 when the committed outputs match their sources, 1 when not.");
            return 0;
        }
        if (c == 'F') {
            full = true;
            continue;
        }
        return CG_EXIT_ERROR;
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: check takes no arguments ('%s')\n", argv[optind]);
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, true);
    if (rc != 0) {
        cg_project_free(&p);
        return rc;
    }
    cg_output_file files[64];
    size_t n = cg_cli_outputs(&p, files, 64);
    cg_error err;
    cg_error_init(&err);
    cg_strbuf report = CG_STRBUF_INIT;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        char *old = NULL;
        size_t old_len = 0;
        int r = cg_read_output(p.root, files[i].rel, &old, &old_len, &err);
        if (r < 0) {
            rc = CG_EXIT_ERROR;
            break;
        }
        if (r == 0 && old_len == files[i].len && memcmp(old, files[i].data, old_len) == 0) {
            free(old);
            continue;
        }
        differ++;
        if (r == 1) {
            cg_strbuf_addf(&report, "%s is missing\n", files[i].rel);
        } else {
            cg_diff d;
            cg_diff_compute(old, old_len, files[i].data, files[i].len, &d);
            char a[512], b[512];
            snprintf(a, sizeof a, "%s (committed)", files[i].rel);
            snprintf(b, sizeof b, "%s (from its sources)", files[i].rel);
            cg_diff_unified(&d, old, old_len, files[i].data, files[i].len, a, b, 3, full ? 0 : 200, &report);
            cg_diff_release(&d);
        }
        free(old);
    }
    if (rc == 0) {
        if (differ == 0) {
            if (!g->quiet)
                printf("cigen: %s is in sync with its sources\n", p.manifest.output);
        } else {
            printf("cigen: %zu output%s out of sync with the sources\n", differ, differ == 1 ? " is" : "s are");
            fputs(cg_strbuf_str(&report), stdout);
            printf("To fix it, run: %s\n", p.manifest.regenerate);
            rc = CG_EXIT_DIFF;
        }
    } else {
        cg_cli_print_error(&err);
    }
    cg_strbuf_release(&report);
    cg_error_release(&err);
    cg_project_free(&p);
    return rc;
}
