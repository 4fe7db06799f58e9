/*
 * compare/crosscheck/links.h - the join of an Execution Trace to its Kineto
 * trace, read from two files, as links kept in memory (internal to
 * libtracetool): what `tracetool ingest DB ET` or `crosscheck` store in a
 * database's table et_links, for an analysis that reads the files
 * (memtimeline FILE --et ET) and so has no database to read them from.
 */
#ifndef TT_COMPARE_CROSSCHECK_LINKS_H
#define TT_COMPARE_CROSSCHECK_LINKS_H

#include <stddef.h>
#include <stdint.h>

/* one Kineto op matched to one ET node */
struct tt__xc_link {
    int64_t slice_id; /* the op's slice, numbered as tt__ingest_rows of the trace numbers it */
    int64_t node_id;  /* the ET node's id ("id" in the ET) */
};

struct tt__xc_links {
    struct tt__xc_link *v; /* sorted by slice_id */
    size_t n, alloc;
    int64_t pairs;         /* ET / Kineto pairs joined (0: the ET matched nothing) */
};

/*
 * The links of the ET file et_path to the Kineto trace file trace (the
 * trace read first, as `tracetool ingest DB TRACE ET` numbers them), the
 * pair crosscheck would choose. TT_ENOTFOUND when the two hold no Execution
 * Trace or no Kineto trace; a file's own error (it cannot be read, it is
 * not JSON) as its reader says it. Free with tt__xc_links_free.
 */
int tt__xc_links_files(const char *trace, const char *et_path, struct tt__xc_links *out);
void tt__xc_links_free(struct tt__xc_links *l);
/* the ET node linked to slice_id: 1 and *node_id, or 0 */
int tt__xc_links_find(const struct tt__xc_links *l, int64_t slice_id, int64_t *node_id);

#endif
