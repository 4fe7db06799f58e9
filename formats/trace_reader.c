/*
 * formats/trace_reader.c - the top-level walker and the event / ET-node /
 * memory-row decoders behind tt_read_trace().
 *
 * Data flow: tt_source (bytes) -> tt_jstream (finds one complete event) ->
 * tt_jp (decodes it) -> tt_trace_sink. Only one event is in memory at a time.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "formats/source.h"
#include "formats/reader_internal.h"
#include "tracetool/formats.h"

enum elem_kind { ELEM_EVENT, ELEM_NODE, ELEM_MEMROW };

/* bytes the window must hold to decode an element in place */
#define DIRECT_MIN (64 * 1024)

struct reader {
    tt_jstream js;
    const tt_trace_sink *sink;
    const tt_read_options *opts;
    tt_read_stats *st;
    tt_arena arena;     /* per element, reset each time */
    tt_buf rest;        /* remaining args / attrs / extras */
    tt_buf extra;       /* unknown event keys */
    tt_buf tmp;         /* minified sub-values */
    tt_buf meta;
    int64_t index;
};

const char *tt_format_name(tt_trace_format f)
{
    switch (f) {
    case TT_FMT_CHROME: return "kineto-json";
    case TT_FMT_CHROME_ARRAY: return "chrome-array";
    case TT_FMT_ET: return "execution-trace";
    case TT_FMT_MEMTL_RAW: return "memory-timeline-raw";
    default: return "unknown";
    }
}

static int keyeq(const char *k, size_t kl, const char *lit, size_t ll)
{
    return kl == ll && memcmp(k, lit, ll) == 0;
}
#define KEY(lit) keyeq(k, kl, lit, sizeof(lit) - 1)

/* Append `"key":<value>` to an object under construction in b. */
static int rest_add(tt_jp *jp, tt_buf *b, const char *prefix, const char *k,
                    size_t kl)
{
    if (b->len)
        tt_buf_addch(b, ',');
    if (prefix) {
        tt_buf t = TT_BUF_INIT;
        tt_buf_addstr(&t, prefix);
        tt_buf_add(&t, k, kl);
        tt_buf_add_json_string(b, t.buf, t.len);
        tt_buf_release(&t);
    } else {
        tt_buf_add_json_string(b, k, kl);
    }
    tt_buf_addch(b, ':');
    return tt_jp_minify(jp, b);
}

/* rest_add for a Chrome event's leftovers, which TT_READ_NO_ARGS skips */
static int event_rest(struct reader *r, tt_jp *jp, tt_buf *b, const char *prefix,
                      const char *k, size_t kl)
{
    if (r->opts && (r->opts->flags & TT_READ_NO_ARGS))
        return tt_jp_skip(jp);
    return rest_add(jp, b, prefix, k, kl);
}

static const char *finish_obj(struct reader *r, tt_buf *b, size_t *len)
{
    char *s;
    if (!b->len) {
        if (len)
            *len = 0;
        return NULL;
    }
    s = tt_arena_alloc(&r->arena, b->len + 3);
    if (!s)
        return NULL;
    s[0] = '{';
    memcpy(s + 1, b->buf, b->len);
    s[b->len + 1] = '}';
    s[b->len + 2] = '\0';
    if (len)
        *len = b->len + 2;
    return s;
}

static int minify_to_arena(struct reader *r, tt_jp *jp, const char **out)
{
    int rc;
    tt_buf_reset(&r->tmp);
    if ((rc = tt_jp_minify(jp, &r->tmp)) < 0)
        return rc;
    *out = tt_arena_strndup(&r->arena, r->tmp.buf, r->tmp.len);
    return *out ? 0 : tt__oom();
}

/* integer value or fall back to the rest object */
/* sizes of memory events: larger ones stay in args as written */
#define SIZE_BITS (TT_A_BYTES | TT_A_TOTAL_ALLOC | TT_A_TOTAL_RESERVED)

static int int_or_rest(struct reader *r, tt_jp *jp, const char *k, size_t kl,
                       int64_t *dst, uint32_t *have, uint32_t bit)
{
    const char *save = jp->p;
    if (tt_jp_peek(jp) == TT_JT_NUMBER) {
        tt_jnum n;
        int rc;
        int64_t v;
        if (tt_jp_int_fast(jp, &v) != 0) {
            rc = tt_jp_number(jp, &n);
            if (rc < 0)
                return rc;
            if (!n.fits)
                goto rest;
            v = n.i;
        }
        if ((bit & SIZE_BITS) && (v <= -TT_BYTES_MAX || v >= TT_BYTES_MAX))
            goto rest;
        *dst = v;
        *have |= bit;
        return 0;
    }
rest:
    jp->p = save;
    return event_rest(r, jp, &r->rest, NULL, k, kl);
}

static int read_id(tt_jp *jp, tt_arena *a, tt_id *id, const char **raw_fallback)
{
    enum tt_jtype t = tt_jp_peek(jp);
    int rc;
    *raw_fallback = NULL;
    id->present = 1;
    if (t == TT_JT_NUMBER) {
        tt_jnum n;
        if (tt_jp_int_fast(jp, &id->num) == 0)
            return 0;
        if ((rc = tt_jp_number(jp, &n)) < 0)
            return rc;
        if (n.fits) {
            id->num = n.i;
            return 0;
        }
        id->is_str = 1;
        id->str = tt_arena_strndup(a, n.text, n.len);
        return id->str ? 0 : tt__oom();
    }
    if (t == TT_JT_STRING) {
        const char *s;
        size_t l;
        if ((rc = tt_jp_string(jp, a, &s, &l)) < 0)
            return rc;
        if (l && tt_parse_i64(s, l, &id->num) == 0)
            return 0;
        id->is_str = 1;
        id->str = s;
        return 0;
    }
    id->present = 0;
    *raw_fallback = "";
    return 0;
}

/* a time in range (see TT_TIME_MAX_NS): 0; else 1 and the cursor unmoved */
static int time_in_range(tt_jp *jp, const char *save, int isdur, int64_t ns, int *has)
{
    if (isdur ? tt_dur_ok(ns) : tt_time_ok(ns)) {
        *has = 1;
        return 0;
    }
    jp->p = save;
    return 1;
}

static int read_time(tt_jp *jp, tt_arena *a, int isdur, int64_t *ns, int *has)
{
    enum tt_jtype t = tt_jp_peek(jp);
    const char *save = jp->p;
    int rc;
    if (t == TT_JT_NUMBER) {
        tt_jnum n;
        if (tt_jp_time_ns(jp, ns) == 0)
            return time_in_range(jp, save, isdur, *ns, has);
        if ((rc = tt_jp_number(jp, &n)) < 0)
            return rc;
        if (!n.nonfinite && tt_us_text_to_ns(n.text, n.len, ns) == 0)
            return time_in_range(jp, save, isdur, *ns, has);
    } else if (t == TT_JT_STRING) {
        const char *s;
        size_t l;
        if ((rc = tt_jp_string(jp, a, &s, &l)) < 0)
            return rc;
        if (tt_us_text_to_ns(s, l, ns) == 0)
            return time_in_range(jp, save, isdur, *ns, has);
    }
    jp->p = save;
    return 1; /* not a time: caller keeps the raw value */
}

static int read_triple(tt_jp *jp, int64_t v[3])
{
    const char *save = jp->p;
    int i = 0, rc;
    if (tt_jp_array_begin(jp) < 0)
        goto no;
    while ((rc = tt_jp_array_next(jp)) == 1) {
        tt_jnum n;
        if (i >= 3 || tt_jp_peek(jp) != TT_JT_NUMBER)
            goto no;
        if (tt_jp_number(jp, &n) < 0 || !n.fits)
            goto no;
        v[i++] = n.i;
    }
    if (rc < 0 || i != 3)
        goto no;
    return 1;
no:
    jp->p = save;
    jp->depth = 0;
    return 0;
}

static int decode_args(struct reader *r, tt_jp *jp, tt_event *ev)
{
    const char *k;
    size_t kl;
    int rc;
    int depth0 = jp->depth;
    if (tt_jp_peek(jp) != TT_JT_OBJECT) {
        if (tt_jp_peek(jp) == TT_JT_NULL)
            return tt_jp_skip(jp);
        return event_rest(r, jp, &r->extra, "@", "args", 4);
    }
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(jp, &r->arena, &k, &kl)) == 1) {
        int64_t *dst = NULL;
        uint32_t bit = 0;
        switch (kl) {
        case 4:
            if (KEY("Addr")) { dst = &ev->addr; bit = TT_A_ADDR; }
            else if (KEY("cbid")) { dst = &ev->cbid; bit = TT_A_CBID; }
            else if (ev->ph == 'M' && KEY("name") && tt_jp_peek(jp) == TT_JT_STRING) {
                size_t l;
                if ((rc = tt_jp_string(jp, &r->arena, &ev->arg_name, &l)) < 0)
                    return rc;
                continue;
            } else if (KEY("grid") && !(ev->have & TT_A_GRID)) {
                if (read_triple(jp, ev->grid)) {
                    ev->have |= TT_A_GRID;
                    jp->depth = depth0 + 1;
                    continue;
                }
                jp->depth = depth0 + 1;
            }
            break;
        case 5:
            if (KEY("Bytes") || KEY("bytes")) { dst = &ev->bytes; bit = TT_A_BYTES; }
            else if (KEY("block") && !(ev->have & TT_A_BLOCK)) {
                if (read_triple(jp, ev->block)) {
                    ev->have |= TT_A_BLOCK;
                    jp->depth = depth0 + 1;
                    continue;
                }
                jp->depth = depth0 + 1;
            }
            break;
        case 6:
            if (KEY("Ev Idx")) { dst = &ev->ev_idx; bit = TT_A_EV_IDX; }
            else if (KEY("device")) { dst = &ev->device; bit = TT_A_DEVICE; }
            else if (KEY("stream")) { dst = &ev->stream; bit = TT_A_STREAM; }
            else if (ev->ph == 'M' && KEY("labels") && tt_jp_peek(jp) == TT_JT_STRING) {
                size_t l;
                if ((rc = tt_jp_string(jp, &r->arena, &ev->arg_labels, &l)) < 0)
                    return rc;
                continue;
            }
            break;
        case 7:
            if (KEY("context")) { dst = &ev->context; bit = TT_A_CONTEXT; }
            break;
        case 9:
            if (KEY("Device Id")) { dst = &ev->device_id; bit = TT_A_DEVICE_ID; }
            break;
        case 10:
            if (KEY("Input Dims") || KEY("Input dims")) {
                if ((rc = minify_to_arena(r, jp, &ev->input_dims)) < 0)
                    return rc;
                continue;
            }
            if (KEY("Input type")) {
                if ((rc = minify_to_arena(r, jp, &ev->input_types)) < 0)
                    return rc;
                continue;
            }
            if (ev->ph == 'M' && KEY("sort_index")) { dst = &ev->sort_index; bit = TT_A_SORT_INDEX; }
            break;
        case 11:
            if (KEY("External id") || KEY("external id")) { dst = &ev->external_id; bit = TT_A_EXTERNAL_ID; }
            else if (KEY("correlation")) { dst = &ev->correlation; bit = TT_A_CORRELATION; }
            else if (KEY("Device Type")) { dst = &ev->device_type; bit = TT_A_DEVICE_TYPE; }
            break;
        case 13:
            if (KEY("Fwd thread id")) { dst = &ev->fwd_tid; bit = TT_A_FWD_TID; }
            else if (KEY("shared memory")) { dst = &ev->shared_mem; bit = TT_A_SHARED_MEM; }
            break;
        case 14:
            if (KEY("Total Reserved")) { dst = &ev->total_reserved; bit = TT_A_TOTAL_RESERVED; }
            break;
        case 15:
            if (KEY("Sequence number")) { dst = &ev->seq_nr; bit = TT_A_SEQ_NR; }
            else if (KEY("Total Allocated")) { dst = &ev->total_allocated; bit = TT_A_TOTAL_ALLOC; }
            break;
        case 18:
            if (KEY("Record function id")) { dst = &ev->rf_id; bit = TT_A_RF_ID; }
            break;
        case 20:
            if (KEY("registers per thread")) { dst = &ev->registers; bit = TT_A_REGISTERS; }
            break;
        default:
            break;
        }
        if (dst && !(ev->have & bit))
            rc = int_or_rest(r, jp, k, kl, dst, &ev->have, bit);
        else
            rc = event_rest(r, jp, &r->rest, NULL, k, kl);
        if (rc < 0)
            return rc;
    }
    return rc;
}

static int decode_event(struct reader *r, tt_jp *jp, tt_event *ev)
{
    const char *k;
    size_t kl;
    int rc;
    const char *args_at = NULL;
    memset(ev, 0, sizeof(*ev));
    ev->name = "";
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(jp, &r->arena, &k, &kl)) == 1) {
        const char *fallback = NULL;
        enum tt_jtype t = tt_jp_peek(jp);
        if (kl == 2 && k[0] == 'p' && k[1] == 'h' && t == TT_JT_STRING &&
            jp->end - jp->p >= 3 && jp->p[2] == '"' && jp->p[1] != '\\' && jp->p[1] != '"' &&
            (unsigned char)jp->p[1] >= 0x20 && (unsigned char)jp->p[1] < 0x80) {
            /* the usual one-letter phase, without a copy */
            ev->ph = jp->p[1];
            jp->p += 3;
            continue;
        }
        if (kl > 4) {
            /* no event-level key longer than "args" is decoded here */
        } else if (KEY("ph") && t == TT_JT_STRING) {
            const char *s;
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, &s, &l)) < 0)
                return rc;
            if (l == 1) {
                ev->ph = s[0];
                continue;
            }
            /* not a phase: keep it */
            tt_buf_addstr(&r->extra, r->extra.len ? ",\"@ph\":" : "\"@ph\":");
            tt_buf_add_json_string(&r->extra, s, l);
            continue;
        } else if (KEY("name") && t == TT_JT_STRING) {
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, &ev->name, &l)) < 0)
                return rc;
            continue;
        } else if (KEY("cat") && t == TT_JT_STRING) {
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, &ev->cat, &l)) < 0)
                return rc;
            continue;
        } else if (KEY("pid") || KEY("tid") || KEY("id")) {
            tt_id *id = k[0] == 'p' ? &ev->pid : k[0] == 't' ? &ev->tid : &ev->id;
            if ((rc = read_id(jp, &r->arena, id, &fallback)) < 0)
                return rc;
            if (!fallback)
                continue;
        } else if (KEY("ts") || KEY("dur")) {
            int isdur = k[0] == 'd';
            int64_t at = tt_jp_offset(jp);
            rc = read_time(jp, &r->arena, isdur, isdur ? &ev->dur_ns : &ev->ts_ns,
                           isdur ? &ev->has_dur : &ev->has_ts);
            if (rc < 0)
                return rc;
            if (rc == 0)
                continue;
            if (r->st->bad_times++ == 0) /* kept below as "@ts" / "@dur" */
                r->st->first_bad_time_offset = at;
        } else if ((KEY("bp") || KEY("s")) && t == TT_JT_STRING) {
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, k[0] == 'b' ? &ev->bp : &ev->s, &l)) < 0)
                return rc;
            continue;
        } else if (KEY("args")) {
            if (ev->ph) {
                if ((rc = decode_args(r, jp, ev)) < 0)
                    return rc;
            } else {
                /* phase not seen yet: decode once the whole event is read */
                args_at = jp->p;
                if ((rc = tt_jp_skip(jp)) < 0)
                    return rc;
            }
            continue;
        }
        if ((rc = event_rest(r, jp, &r->extra, "@", k, kl)) < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (args_at) {
        tt_jp sub;
        tt_jp_init(&sub, jp->name, jp->buf, jp->base, args_at,
                   (size_t)(jp->end - args_at));
        if ((rc = decode_args(r, &sub, ev)) < 0)
            return rc;
        jp->repairs += sub.repairs;
    }
    if (r->extra.len) {
        if (r->rest.len)
            tt_buf_addch(&r->rest, ',');
        tt_buf_add(&r->rest, r->extra.buf, r->extra.len);
    }
    if (r->rest.oom || r->extra.oom)
        return tt__oom();
    ev->args = finish_obj(r, &r->rest, &ev->args_len);
    if (r->rest.len && !ev->args)
        return tt__oom();
    return 0;
}

/* ---- Execution Trace nodes ---- */

static int et_field(const char *k, size_t kl, tt_et_node *n, int64_t **dst, uint32_t *bit)
{
    *dst = NULL;
    if (KEY("rf_id")) { *dst = &n->rf_id; *bit = TT_ET_RF_ID; }
    else if (KEY("fw_parent")) { *dst = &n->fw_parent; *bit = TT_ET_FW_PARENT; }
    else if (KEY("seq_id")) { *dst = &n->seq_id; *bit = TT_ET_SEQ_ID; }
    else if (KEY("scope")) { *dst = &n->scope; *bit = TT_ET_SCOPE; }
    else if (KEY("tid")) { *dst = &n->tid; *bit = TT_ET_TID; }
    else if (KEY("fw_tid")) { *dst = &n->fw_tid; *bit = TT_ET_FW_TID; }
    return *dst != NULL;
}

static int et_attrs(struct reader *r, tt_jp *jp, tt_et_node *n)
{
    int rc;
    const char *save = jp->p;
    if (tt_jp_peek(jp) != TT_JT_ARRAY)
        return rest_add(jp, &r->extra, NULL, "attrs", 5);
    if ((rc = tt_jp_array_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(jp)) == 1) {
        const char *k, *aname = NULL, *val_at = NULL;
        size_t kl, anl = 0;
        if (tt_jp_peek(jp) != TT_JT_OBJECT) {
            /* unexpected attr shape: keep the whole array */
            jp->p = save;
            jp->depth--;
            tt_buf_reset(&r->rest);
            return rest_add(jp, &r->extra, NULL, "attrs", 5);
        }
        if ((rc = tt_jp_object_begin(jp)) < 0)
            return rc;
        while ((rc = tt_jp_object_next(jp, &r->arena, &k, &kl)) == 1) {
            if (KEY("name") && tt_jp_peek(jp) == TT_JT_STRING) {
                if ((rc = tt_jp_string(jp, &r->arena, &aname, &anl)) < 0)
                    return rc;
            } else if (KEY("value")) {
                val_at = jp->p;
                if ((rc = tt_jp_skip(jp)) < 0)
                    return rc;
            } else if ((rc = tt_jp_skip(jp)) < 0) {
                return rc;
            }
        }
        if (rc < 0)
            return rc;
        if (aname && val_at) {
            tt_jp sub;
            int64_t *dst;
            uint32_t bit;
            tt_jp_init(&sub, jp->name, jp->buf, jp->base, val_at,
                       (size_t)(jp->end - val_at));
            if (et_field(aname, anl, n, &dst, &bit) &&
                tt_jp_peek(&sub) == TT_JT_NUMBER) {
                tt_jnum num;
                if ((rc = tt_jp_number(&sub, &num)) < 0)
                    return rc;
                if (num.fits) {
                    *dst = num.i;
                    n->have |= bit;
                    continue;
                }
                sub.p = val_at;
            } else if (keyeq(aname, anl, "op_schema", 9) &&
                       tt_jp_peek(&sub) == TT_JT_STRING) {
                size_t l;
                if ((rc = tt_jp_string(&sub, &r->arena, &n->op_schema, &l)) < 0)
                    return rc;
                continue;
            }
            if ((rc = rest_add(&sub, &r->rest, NULL, aname, anl)) < 0)
                return rc;
        }
    }
    return rc;
}

static int et_io(struct reader *r, tt_jp *jp, int out, tt_et_node *n)
{
    const char *k;
    size_t kl;
    int rc;
    if (tt_jp_peek(jp) != TT_JT_OBJECT) /* 1.0.1: the values list itself */
        return minify_to_arena(r, jp, out ? &n->outputs : &n->inputs);
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(jp, &r->arena, &k, &kl)) == 1) {
        const char **dst = NULL;
        if (KEY("values")) dst = out ? &n->outputs : &n->inputs;
        else if (KEY("shapes")) dst = out ? &n->output_shapes : &n->input_shapes;
        else if (KEY("types")) dst = out ? &n->output_types : &n->input_types;
        else if (KEY("strides")) dst = out ? &n->output_strides : &n->input_strides;
        if (dst)
            rc = minify_to_arena(r, jp, dst);
        else
            rc = rest_add(jp, &r->extra, out ? "outputs." : "inputs.", k, kl);
        if (rc < 0)
            return rc;
    }
    return rc;
}

static int decode_node(struct reader *r, tt_jp *jp, tt_et_node *n)
{
    const char *k;
    size_t kl;
    int rc;
    memset(n, 0, sizeof(*n));
    n->name = "";
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(jp, &r->arena, &k, &kl)) == 1) {
        enum tt_jtype t = tt_jp_peek(jp);
        int64_t *dst = NULL;
        uint32_t bit = 0;
        const char **sdst = NULL;
        if (KEY("name") && t == TT_JT_STRING) {
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, &n->name, &l)) < 0)
                return rc;
            continue;
        }
        if (KEY("op_schema") && t == TT_JT_STRING) {
            size_t l;
            if ((rc = tt_jp_string(jp, &r->arena, &n->op_schema, &l)) < 0)
                return rc;
            continue;
        }
        if ((KEY("id") || KEY("ctrl_deps") || KEY("parent") ||
             et_field(k, kl, n, &dst, &bit)) && t == TT_JT_NUMBER) {
            tt_jnum num;
            const char *save = jp->p;
            if ((rc = tt_jp_number(jp, &num)) < 0)
                return rc;
            if (num.fits) {
                if (dst) {
                    *dst = num.i;
                    n->have |= bit;
                } else if (k[0] == 'i') {
                    n->id = num.i;
                } else {
                    n->parent = num.i;
                    n->has_parent = 1;
                }
                continue;
            }
            jp->p = save;
        } else if (KEY("attrs")) {
            if ((rc = et_attrs(r, jp, n)) < 0)
                return rc;
            continue;
        } else if (KEY("inputs") || KEY("outputs")) {
            if ((rc = et_io(r, jp, k[0] == 'o', n)) < 0)
                return rc;
            continue;
        } else if (KEY("input_shapes")) sdst = &n->input_shapes;
        else if (KEY("input_types")) sdst = &n->input_types;
        else if (KEY("input_strides")) sdst = &n->input_strides;
        else if (KEY("output_shapes")) sdst = &n->output_shapes;
        else if (KEY("output_types")) sdst = &n->output_types;
        else if (KEY("output_strides")) sdst = &n->output_strides;
        if (sdst) {
            if ((rc = minify_to_arena(r, jp, sdst)) < 0)
                return rc;
            continue;
        }
        if ((rc = rest_add(jp, &r->extra, NULL, k, kl)) < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (r->rest.oom || r->extra.oom)
        return tt__oom();
    n->attrs = finish_obj(r, &r->rest, NULL);
    n->extra = finish_obj(r, &r->extra, NULL);
    return 0;
}

/* ---- memory timeline raw rows ---- */

static int decode_memrow(tt_jp *jp, tt_memrow *m)
{
    int rc, i = 0, bad = 0;
    memset(m, 0, sizeof(*m));
    if ((rc = tt_jp_array_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(jp)) == 1) {
        enum tt_jtype t = tt_jp_peek(jp);
        tt_jnum n;
        if (i >= 4)
            return 1;
        if (t == TT_JT_NULL && i == 3) {
            if ((rc = tt_jp_skip(jp)) < 0)
                return rc;
            i++;
            continue;
        }
        if (t != TT_JT_NUMBER)
            return 1;
        if ((rc = tt_jp_number(jp, &n)) < 0)
            return rc;
        if (!n.fits) {
            int64_t ns;
            /* times may be written as floats */
            if (i == 0 && !n.nonfinite && tt_us_text_to_ns(n.text, n.len, &ns) == 0) {
                m->ts = ns / 1000;
                i++;
                continue;
            }
            if (i != 0)
                return 1;
            bad = 1; /* a number, but not a time: counted as one */
            i++;
            continue;
        }
        switch (i) {
        case 0: m->ts = n.i; break;
        case 1: m->action = n.i; break;
        case 2: m->bytes = n.i; break;
        default: m->category = n.i; m->has_category = 1; break;
        }
        i++;
    }
    if (rc < 0)
        return rc;
    if (i < 3)
        return 1;
    /* a time or size the analyses cannot add up: counted, not delivered */
    return !bad && tt_time_ok(m->ts) && m->bytes > -TT_BYTES_MAX && m->bytes < TT_BYTES_MAX
               ? 0 : 2;
}

/* ---- walker ---- */

static int stream_err(struct reader *r, int rc, const char *where)
{
    if (rc == TT_ETRUNCATED) {
        r->st->truncated = 1;
        return tt_error_set_at(TT_ETRUNCATED, r->js.name, tt_js_offset(&r->js) >
                                   r->js.base + (int64_t)r->js.end
                                   ? tt_js_offset(&r->js)
                                   : r->js.base + (int64_t)r->js.end,
                               "input ends inside %s after %lld complete "
                               "elements (truncated file?)",
                               where, (long long)r->index);
    }
    return rc;
}

static int peek_or_trunc(struct reader *r, const char *where)
{
    int c = tt_js_peek(&r->js);
    if (c == -1) {
        r->st->truncated = 1;
        return tt_error_set_at(TT_ETRUNCATED, r->js.name, tt_js_offset(&r->js),
                               "input ends inside %s after %lld complete "
                               "elements (truncated file?)",
                               where, (long long)r->index);
    }
    return c;
}

/*
 * Decode one array element. In direct mode [start, start+len) is the rest of
 * the window: a decode failure returns 1 so the caller can fall back to the
 * exact scan (the element may just be cut by the window), and *used gets the
 * element's length. Otherwise [start, len) is exactly the element.
 */
static int element(struct reader *r, enum elem_kind kind, const char *start,
                   size_t len, int direct, size_t *used)
{
    tt_jp jp;
    int rc;
    int64_t off = r->js.base + (int64_t)(start - r->js.buf);
    union {
        tt_memrow m;
        tt_event ev;
        tt_et_node n;
    } u;
    tt_jp_init(&jp, r->js.name, r->js.buf, r->js.base, start, len);
    tt_arena_reset(&r->arena);
    tt_buf_reset(&r->rest);
    tt_buf_reset(&r->extra);

    if (kind == ELEM_MEMROW) {
        if (tt_jp_peek(&jp) != TT_JT_ARRAY)
            goto skip;
        rc = decode_memrow(&jp, &u.m);
        if (rc == 1 && !direct)
            goto skip;
        if (rc == 2 && !direct) {
            if ((rc = tt_jp_finish(&jp)) < 0)
                return rc;
            if (r->st->bad_times++ == 0)
                r->st->first_bad_time_offset = off;
            return 0;
        }
    } else if (tt_jp_peek(&jp) != TT_JT_OBJECT) {
        goto skip;
    } else if (kind == ELEM_EVENT) {
        rc = decode_event(r, &jp, &u.ev);
    } else {
        rc = decode_node(r, &jp, &u.n);
    }
    if (rc != 0)
        return direct ? 1 : rc;
    if (direct)
        *used = (size_t)(jp.p - start);
    else if ((rc = tt_jp_finish(&jp)) < 0)
        return rc;
    if (kind == ELEM_MEMROW) {
        u.m.index = r->index;
        if (r->sink->on_memrow && (rc = r->sink->on_memrow(r->sink->ctx, &u.m)) != 0)
            return rc < 0 ? rc : TT_ECANCELED;
    } else if (kind == ELEM_EVENT) {
        u.ev.index = r->index;
        u.ev.offset = off;
        if (r->sink->on_event && (rc = r->sink->on_event(r->sink->ctx, &u.ev)) != 0)
            return rc < 0 ? rc : TT_ECANCELED;
    } else {
        u.n.index = r->index;
        u.n.offset = off;
        if (r->sink->on_et_node && (rc = r->sink->on_et_node(r->sink->ctx, &u.n)) != 0)
            return rc < 0 ? rc : TT_ECANCELED;
    }
    if (jp.repairs) {
        if (r->st->repaired == 0)
            r->st->first_repair_offset = off;
        r->st->repaired += jp.repairs;
    }
    r->index++;
    r->st->events = r->index;
    return 0;
skip:
    if (direct)
        return 1;
    /* valid JSON of the wrong type: counted, not fatal */
    tt_jp_init(&jp, r->js.name, r->js.buf, r->js.base, start, len);
    if ((rc = tt_jp_skip(&jp)) < 0 || (rc = tt_jp_finish(&jp)) < 0)
        return rc;
    if (r->st->skipped == 0)
        r->st->first_skip_offset = off;
    r->st->skipped++;
    return 0;
}

static int stream_array(struct reader *r, enum elem_kind kind, const char *where,
                        int open_consumed)
{
    int c, first = 1, rc;
    if (!open_consumed)
        tt_js_advance(&r->js, 1); /* '[' */
    for (;;) {
        const char *start;
        size_t len;
        if ((c = peek_or_trunc(r, where)) < 0)
            return c;
        if (c == ']') {
            tt_js_advance(&r->js, 1);
            return 0;
        }
        if (!first) {
            if (c != ',')
                return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                                       "expected ',' or ']' after element %lld of %s, found '%c'",
                                       (long long)r->index, where, c >= 0x20 && c < 0x7f ? c : '?');
            tt_js_advance(&r->js, 1);
            if ((c = peek_or_trunc(r, where)) < 0)
                return c;
            if (c == ']') { /* trailing comma */
                r->st->repaired++;
                tt_js_advance(&r->js, 1);
                return 0;
            }
        }
        first = 0;
        /* fast path: decode straight from the window when it holds enough */
        if (c == (kind == ELEM_MEMROW ? '[' : '{') &&
            (rc = tt_js_ensure(&r->js, DIRECT_MIN)) >= 0 &&
            r->js.end - r->js.pos >= (r->js.eof ? 1 : DIRECT_MIN)) {
            rc = element(r, kind, r->js.buf + r->js.pos, r->js.end - r->js.pos, 1, &len);
            if (rc < 0)
                return rc;
            if (rc == 0) {
                tt_js_advance(&r->js, len);
                goto next;
            }
        }
        if ((rc = tt_js_scan_value(&r->js, &start, &len)) < 0)
            return stream_err(r, rc, where);
        if ((rc = element(r, kind, start, len, 0, NULL)) != 0)
            return rc;
        tt_js_advance(&r->js, len);
    next:
        if (r->opts && r->opts->progress && (r->index & 0xFFFF) == 0)
            r->opts->progress(r->opts->progress_payload,
                              tt_source_file_pos(r->js.src),
                              tt_source_file_size(r->js.src), tt_js_offset(&r->js),
                              r->index);
    }
}

static int set_format(struct reader *r, tt_trace_format f)
{
    r->st->format = f;
    if (r->sink->on_format)
        return r->sink->on_format(r->sink->ctx, f);
    return 0;
}

/*
 * A top-level key seen before is counted (stats.dup_keys). The first 256
 * distinct keys are remembered (length-prefixed in *seen): real traces have
 * a dozen, and a hostile file with millions stays linear.
 */
static int note_key(struct reader *r, tt_buf *seen, const char *key, size_t klen, int64_t at)
{
    size_t off = 0, n = 0;
    while (off < seen->len) {
        size_t l;
        memcpy(&l, seen->buf + off, sizeof(l));
        if (l == klen && !memcmp(seen->buf + off + sizeof(l), key, klen)) {
            if (r->st->dup_keys++ == 0)
                r->st->first_dup_key_offset = at;
            return 0;
        }
        off += sizeof(l) + l;
        n++;
    }
    if (n < 256) {
        tt_buf_add(seen, (const char *)&klen, sizeof(klen));
        tt_buf_add(seen, key, klen);
        if (seen->oom)
            return tt__oom();
    }
    return 0;
}

static int walk_object_keys(struct reader *r, tt_buf *seen);

static int walk_object(struct reader *r)
{
    tt_buf seen;
    int rc;
    tt_buf_init(&seen);
    rc = walk_object_keys(r, &seen);
    tt_buf_release(&seen);
    return rc;
}

static int walk_object_keys(struct reader *r, tt_buf *seen)
{
    int c, first = 1, rc, found = 0;
    tt_js_advance(&r->js, 1); /* '{' */
    for (;;) {
        const char *start, *key;
        size_t len, klen;
        int64_t key_at;
        tt_jp jp;
        if ((c = peek_or_trunc(r, "the top-level object")) < 0)
            return c;
        if (c == '}') {
            tt_js_advance(&r->js, 1);
            break;
        }
        if (!first) {
            if (c != ',')
                return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                                       "expected ',' or '}' in the top-level object");
            tt_js_advance(&r->js, 1);
            if ((c = peek_or_trunc(r, "the top-level object")) < 0)
                return c;
            if (c == '}') {
                r->st->repaired++;
                tt_js_advance(&r->js, 1);
                break;
            }
        }
        first = 0;
        if (c != '"')
            return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                                   "expected a key in the top-level object");
        key_at = tt_js_offset(&r->js);
        if ((rc = tt_js_scan_value(&r->js, &start, &len)) < 0)
            return stream_err(r, rc, "the top-level object");
        tt_arena_reset(&r->arena);
        tt_jp_init(&jp, r->js.name, r->js.buf, r->js.base, start, len);
        if ((rc = tt_jp_string(&jp, &r->arena, &key, &klen)) < 0)
            return rc;
        key = tt_arena_strndup(&r->arena, key, klen); /* survives refills */
        if (!key)
            return tt__oom();
        tt_js_advance(&r->js, len);
        if ((c = peek_or_trunc(r, "the top-level object")) < 0)
            return c;
        if (c != ':')
            return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                                   "expected ':' after key '%s'", key);
        tt_js_advance(&r->js, 1);
        if ((c = peek_or_trunc(r, "the top-level object")) < 0)
            return c;
        if ((rc = note_key(r, seen, key, klen, key_at)) < 0)
            return rc;
        if ((keyeq(key, klen, "traceEvents", 11) || keyeq(key, klen, "nodes", 5)) &&
            (!found || found == (key[0] == 'n' ? 2 : 1))) {
            int is_et = key[0] == 'n';
            char *where;
            if (c != '[')
                return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                                       "'%s' must be an array", key);
            where = strdup(is_et ? "'nodes'" : "'traceEvents'");
            if (!where)
                return tt__oom();
            if (!found && (rc = set_format(r, is_et ? TT_FMT_ET : TT_FMT_CHROME)) != 0) {
                free(where);
                return rc;
            }
            found = is_et ? 2 : 1; /* a second array of the same kind is read too */
            rc = stream_array(r, is_et ? ELEM_NODE : ELEM_EVENT, where, 0);
            free(where);
            if (rc != 0)
                return rc;
            continue;
        }
        if ((rc = tt_js_scan_value(&r->js, &start, &len)) < 0)
            return stream_err(r, rc, "the top-level object");
        tt_jp_init(&jp, r->js.name, r->js.buf, r->js.base, start, len);
        tt_buf_reset(&r->meta);
        if ((rc = tt_jp_minify(&jp, &r->meta)) < 0 || (rc = tt_jp_finish(&jp)) < 0)
            return rc;
        r->st->repaired += jp.repairs;
        tt_js_advance(&r->js, len);
        if (r->sink->on_meta &&
            (rc = r->sink->on_meta(r->sink->ctx, key, r->meta.buf, r->meta.len)) != 0)
            return rc;
    }
    if (!found)
        return tt_error_set_at(TT_EUNSUPPORTED, r->js.name, 0,
                               "not a trace: the top-level object has no "
                               "'traceEvents' or 'nodes' array");
    return 0;
}

static int walk(struct reader *r)
{
    int c = tt_js_peek(&r->js), rc;
    if (c == -1)
        return tt_error_set_at(TT_EEMPTY, r->js.name, tt_js_offset(&r->js),
                               "no JSON value (file holds only whitespace)");
    if (c < 0)
        return c;
    if (c == '{') {
        rc = walk_object(r);
    } else if (c == '[') {
        /* bare array: Chrome events, or memory-timeline rows */
        int c2;
        tt_js_advance(&r->js, 1);
        c2 = tt_js_peek(&r->js);
        if (c2 < -1)
            return c2;
        if ((rc = set_format(r, c2 == '[' ? TT_FMT_MEMTL_RAW : TT_FMT_CHROME_ARRAY)) != 0)
            return rc;
        rc = stream_array(r, c2 == '[' ? ELEM_MEMROW : ELEM_EVENT, "the event array", 1);
    } else {
        if (c >= 0x20 && c < 0x7f)
            return tt_error_set_at(TT_EUNSUPPORTED, r->js.name, tt_js_offset(&r->js),
                                   "not JSON: expected '{' or '[' at the start, found '%c'", c);
        return tt_error_set_at(TT_EUNSUPPORTED, r->js.name, tt_js_offset(&r->js),
                               "not JSON: expected '{' or '[' at the start, found byte 0x%02x", c);
    }
    if (rc != 0)
        return rc;
    c = tt_js_peek(&r->js);
    if (c < -1)
        return c;
    if (c != -1)
        return tt_error_set_at(TT_EINVALID, r->js.name, tt_js_offset(&r->js),
                               "unexpected data after the end of the JSON document");
    return 0;
}

int tt__read_source(tt_source *src, const tt_trace_sink *sink,
                    const tt_read_options *opts, tt_read_stats *st)
{
    struct reader r;
    int rc;
    memset(&r, 0, sizeof(r));
    r.sink = sink;
    r.opts = opts;
    r.st = st;
    tt_buf_init(&r.rest);
    tt_buf_init(&r.extra);
    tt_buf_init(&r.tmp);
    tt_buf_init(&r.meta);
    st->gzip = tt_source_is_gzip(src);
    if ((rc = tt_js_init(&r.js, src)) == 0) {
        rc = walk(&r);
        /* the source may have failed (gzip cut short) while the JSON was fine */
        st->bytes = r.js.base + (int64_t)r.js.end;
        if (rc == TT_ETRUNCATED || (rc < 0 && r.js.src_err == TT_ETRUNCATED)) {
            st->truncated = 1;
            if (r.js.src_err == TT_ETRUNCATED) {
                /* report the gzip error, which is the real cause */
                tt_error_set_at(TT_ETRUNCATED, r.js.name, st->bytes,
                                "gzip stream ends early after %lld complete "
                                "elements (truncated file?)",
                                (long long)r.index);
            }
            rc = TT_ETRUNCATED;
        }
    }
    st->file_bytes = tt_source_file_pos(src);
    tt_source_hash_hex(src, st->hash);
    tt_js_release(&r.js);
    tt_arena_release(&r.arena);
    tt_buf_release(&r.rest);
    tt_buf_release(&r.extra);
    tt_buf_release(&r.tmp);
    tt_buf_release(&r.meta);
    if (rc < 0 && !tt_error_last()->source[0])
        tt_error_set_source(tt_source_name(src));
    return rc;
}

void tt__init_stats(tt_read_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->first_repair_offset = -1;
    st->first_skip_offset = -1;
    st->first_bad_time_offset = -1;
    st->first_dup_key_offset = -1;
}

/* tt_read_trace on the calling thread (formats/pipe.c decides) */
int tt__read_trace_direct(const char *path, const tt_trace_sink *sink,
                          const tt_read_options *opts, tt_read_stats *stats)
{
    tt_source *src;
    int rc;
    if ((rc = tt_source_open(&src, path)) < 0)
        return rc;
    rc = tt__read_source(src, sink, opts, stats);
    tt_source_free(src);
    return rc;
}

int tt_read_trace_mem(const char *name, const void *data, size_t len,
                      const tt_trace_sink *sink, const tt_read_options *opts,
                      tt_read_stats *stats)
{
    tt_source *src;
    tt_read_stats local;
    int rc;
    if (!stats)
        stats = &local;
    tt__init_stats(stats);
    tt_error_clear();
    if ((rc = tt_source_open_mem(&src, name, data, len)) < 0)
        return rc;
    rc = tt__read_source(src, sink, opts, stats);
    tt_source_free(src);
    return rc;
}
