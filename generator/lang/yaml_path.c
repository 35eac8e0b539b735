#include "lang/yaml_path.h"

void cg_path_push_key(cg_strbuf *path, const char *key)
{
    cg_strbuf_addc(path, '/');
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            cg_strbuf_adds(path, "~0");
        else if (*p == '/')
            cg_strbuf_adds(path, "~1");
        else
            cg_strbuf_addc(path, *p);
    }
}

void cg_path_push_index(cg_strbuf *path, size_t index)
{
    cg_strbuf_addf(path, "/%zu", index);
}

void cg_path_join_key(cg_strbuf *out, const char *path, const char *key)
{
    cg_strbuf_reset(out);
    cg_strbuf_adds(out, path);
    cg_path_push_key(out, key);
}

void cg_path_join_index(cg_strbuf *out, const char *path, size_t index)
{
    cg_strbuf_reset(out);
    cg_strbuf_adds(out, path);
    cg_path_push_index(out, index);
}
