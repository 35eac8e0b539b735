#include "lang/lists.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/schema.h"

void cg_lists_init(cg_lists *l)
{
    memset(l, 0, sizeof *l);
    cg_map_init(&l->by_name);
}

void cg_lists_release(cg_lists *l)
{
    free(l->v);
    cg_map_release(&l->by_name);
    memset(l, 0, sizeof *l);
}

cg_list *cg_lists_find(const cg_lists *l, const char *name)
{
    size_t i = (size_t)cg_map_get(&l->by_name, name);
    return i ? &l->v[i - 1] : NULL;
}

int cg_lists_add(cg_lists *l, const cg_doc *doc, cg_pool *pool, cg_error *err)
{
    json_t *root = cg_doc_root(doc);
    if (!root)
        return cg_error_at(err, &(cg_pos){cg_doc_file(doc), 0, 0},
                           "the list file is empty; it names value lists, e.g. cuda: [cpu, cu100]");
    if (cg_expect_object(doc, "", root, "a list file (names of value lists)", err) != 0)
        return -1;
    cg_strbuf kp = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(root, k, v) {
        cg_path_join_key(&kp, "", k);
        cg_pos pos = cg_doc_key_where(doc, kp.buf);
        if (!cg_is_name(k)) {
            rc = cg_error_at(err, &pos, "list name '%s' is not a valid name (letters, digits, '_' and '-', "
                             "starting with a letter or '_')", k);
            break;
        }
        const cg_list *other = cg_lists_find(l, k);
        if (other) {
            rc = cg_error_at(err, &pos, "list '%s' is defined twice", k);
            cg_error_note(err, &other->pos, "first defined here");
            break;
        }
        char what[160];
        snprintf(what, sizeof what, "list '%s'", k);
        if ((rc = cg_expect_array(doc, kp.buf, v, what, err)) != 0)
            break;
        if (json_array_size(v) == 0) {
            cg_pos p = cg_doc_where(doc, kp.buf);
            rc = cg_error_at(err, &p, "list '%s' is empty; give at least one value", k);
            break;
        }
        cg_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
        cg_list *list = &l->v[l->n];
        memset(list, 0, sizeof *list);
        list->name = cg_intern(pool, k);
        list->pos = pos;
        list->n = json_array_size(v);
        list->values = cg_pool_alloc(pool, list->n * sizeof *list->values);
        list->value_pos = cg_pool_alloc(pool, list->n * sizeof *list->value_pos);
        snprintf(what, sizeof what, "a value of list '%s'", k);
        for (size_t i = 0; i < list->n && rc == 0; i++) {
            cg_path_join_index(&ip, kp.buf, i);
            json_t *item = json_array_get(v, i);
            if ((rc = cg_expect_nonempty(doc, ip.buf, item, what, err)) != 0)
                break;
            list->values[i] = cg_intern(pool, json_string_value(item));
            list->value_pos[i] = cg_doc_where(doc, ip.buf);
            /* a value may repeat (a zip's variable column, e.g. numpy pins);
             * the tree refuses it where the list gives a dimension's values */
        }
        if (rc != 0)
            break;
        cg_map_put(&l->by_name, list->name, (void *)(l->n + 1));
        l->n++;
    }
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    return rc;
}
