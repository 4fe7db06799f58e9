/*
 * store/records.h - the rows the ingest produces, declared once: for each
 * record type (one table of docs/SCHEMA.md) its columns in the order the
 * ingest fills them. From these lists come the INSERT statements
 * (store/ingest_write.c), the cell indexes TT_C_<REC>_<COLUMN> that the
 * ingest writes and the row consumers read (store/ingest_rows.h), and the
 * column counts; tests/unit/test_ingest.c checks every list against the
 * schema's tables. Adding a column: the CREATE TABLE (and a migration) in
 * store/db.c, its place in the list here, the cell the ingest fills.
 * Internal.
 */
#ifndef TT_STORE_RECORDS_H
#define TT_STORE_RECORDS_H

/* X(REC, COLUMN, "sql column") for each column, in row order */
#define TT_REC_SLICE(X)  \
    X(SL, ID, "id") \
    X(SL, TRACE_ID, "trace_id") \
    X(SL, PH, "ph") \
    X(SL, CAT, "cat") \
    X(SL, NAME, "name") \
    X(SL, PID, "pid") \
    X(SL, TID, "tid") \
    X(SL, TS, "ts") \
    X(SL, DUR, "dur") \
    X(SL, DEPTH, "depth") \
    X(SL, PARENT_ID, "parent_id") \
    X(SL, EXTERNAL_ID, "external_id") \
    X(SL, RF_ID, "rf_id") \
    X(SL, SEQ_NR, "seq_nr") \
    X(SL, FWD_TID, "fwd_tid") \
    X(SL, EV_IDX, "ev_idx") \
    X(SL, INPUT_DIMS, "input_dims") \
    X(SL, INPUT_TYPES, "input_types") \
    X(SL, ARGS, "args")
#define TT_REC_RUNTIME(X)  \
    X(RT, TRACE_ID, "trace_id") \
    X(RT, CAT, "cat") \
    X(RT, NAME, "name") \
    X(RT, PID, "pid") \
    X(RT, TID, "tid") \
    X(RT, TS, "ts") \
    X(RT, DUR, "dur") \
    X(RT, CORRELATION, "correlation") \
    X(RT, EXTERNAL_ID, "external_id") \
    X(RT, CBID, "cbid") \
    X(RT, ARGS, "args") \
    X(RT, OP_ID, "op_id") \
    X(RT, ID, "id") \
    X(RT, FLOW, "flow")
#define TT_REC_GPU(X)  \
    X(GPU, TRACE_ID, "trace_id") \
    X(GPU, KIND, "kind") \
    X(GPU, CAT, "cat") \
    X(GPU, NAME, "name") \
    X(GPU, PID, "pid") \
    X(GPU, TID, "tid") \
    X(GPU, DEVICE, "device") \
    X(GPU, STREAM, "stream") \
    X(GPU, CONTEXT, "context") \
    X(GPU, TS, "ts") \
    X(GPU, DUR, "dur") \
    X(GPU, CORRELATION, "correlation") \
    X(GPU, EXTERNAL_ID, "external_id") \
    X(GPU, GRID_X, "grid_x") \
    X(GPU, GRID_Y, "grid_y") \
    X(GPU, GRID_Z, "grid_z") \
    X(GPU, BLOCK_X, "block_x") \
    X(GPU, BLOCK_Y, "block_y") \
    X(GPU, BLOCK_Z, "block_z") \
    X(GPU, REGISTERS, "registers") \
    X(GPU, SHARED_MEM, "shared_mem") \
    X(GPU, BYTES, "bytes") \
    X(GPU, COPY_KIND, "copy_kind") \
    X(GPU, ARGS, "args") \
    X(GPU, RUNTIME_ID, "runtime_id") \
    X(GPU, OP_ID, "op_id") \
    X(GPU, FLOW, "flow")
#define TT_REC_MEMORY(X)  \
    X(MEM, TRACE_ID, "trace_id") \
    X(MEM, PH, "ph") \
    X(MEM, CAT, "cat") \
    X(MEM, NAME, "name") \
    X(MEM, PID, "pid") \
    X(MEM, TID, "tid") \
    X(MEM, TS, "ts") \
    X(MEM, DEVICE_TYPE, "device_type") \
    X(MEM, DEVICE_ID, "device_id") \
    X(MEM, ADDR, "addr") \
    X(MEM, BYTES, "bytes") \
    X(MEM, TOTAL_ALLOCATED, "total_allocated") \
    X(MEM, TOTAL_RESERVED, "total_reserved") \
    X(MEM, EV_IDX, "ev_idx") \
    X(MEM, ARGS, "args")
#define TT_REC_FLOW(X)  \
    X(FL, TRACE_ID, "trace_id") \
    X(FL, PH, "ph") \
    X(FL, CAT, "cat") \
    X(FL, NAME, "name") \
    X(FL, FLOW_ID, "flow_id") \
    X(FL, PID, "pid") \
    X(FL, TID, "tid") \
    X(FL, TS, "ts") \
    X(FL, BP, "bp") \
    X(FL, ARGS, "args")
#define TT_REC_INSTANT(X)  \
    X(IN, TRACE_ID, "trace_id") \
    X(IN, PH, "ph") \
    X(IN, CAT, "cat") \
    X(IN, NAME, "name") \
    X(IN, PID, "pid") \
    X(IN, TID, "tid") \
    X(IN, TS, "ts") \
    X(IN, DUR, "dur") \
    X(IN, SCOPE, "scope") \
    X(IN, EVENT_ID, "event_id") \
    X(IN, ARGS, "args")
#define TT_REC_META(X)  \
    X(MD, TRACE_ID, "trace_id") \
    X(MD, PH, "ph") \
    X(MD, CAT, "cat") \
    X(MD, NAME, "name") \
    X(MD, PID, "pid") \
    X(MD, TID, "tid") \
    X(MD, TS, "ts") \
    X(MD, VALUE, "value") \
    X(MD, SORT_INDEX, "sort_index") \
    X(MD, ARGS, "args")
#define TT_REC_ET(X)  \
    X(ET, TRACE_ID, "trace_id") \
    X(ET, NODE_ID, "node_id") \
    X(ET, NAME, "name") \
    X(ET, PARENT, "parent") \
    X(ET, RF_ID, "rf_id") \
    X(ET, FW_PARENT, "fw_parent") \
    X(ET, SEQ_ID, "seq_id") \
    X(ET, SCOPE, "scope") \
    X(ET, TID, "tid") \
    X(ET, FW_TID, "fw_tid") \
    X(ET, OP_SCHEMA, "op_schema") \
    X(ET, INPUTS, "inputs") \
    X(ET, INPUT_SHAPES, "input_shapes") \
    X(ET, INPUT_TYPES, "input_types") \
    X(ET, INPUT_STRIDES, "input_strides") \
    X(ET, OUTPUTS, "outputs") \
    X(ET, OUTPUT_SHAPES, "output_shapes") \
    X(ET, OUTPUT_TYPES, "output_types") \
    X(ET, OUTPUT_STRIDES, "output_strides") \
    X(ET, ATTRS, "attrs") \
    X(ET, EXTRA, "extra")
#define TT_REC_MEMTL(X)  \
    X(MT, TRACE_ID, "trace_id") \
    X(MT, TS, "ts") \
    X(MT, ACTION, "action") \
    X(MT, BYTES, "bytes") \
    X(MT, CATEGORY, "category")
#define TT_REC_STR(X)  \
    X(STR, ID, "id") \
    X(STR, S, "s")

/* every record type: X(ROWS_ID, REC, "table") in enum order */
#define TT_RECORDS(X) \
    X(TT_ROWS_SLICE, SLICE, "slices") \
    X(TT_ROWS_RUNTIME, RUNTIME, "runtime") \
    X(TT_ROWS_GPU, GPU, "gpu_ops") \
    X(TT_ROWS_MEMORY, MEMORY, "memory") \
    X(TT_ROWS_FLOW, FLOW, "flow_events") \
    X(TT_ROWS_INSTANT, INSTANT, "instants") \
    X(TT_ROWS_META, META, "metadata_events") \
    X(TT_ROWS_ET, ET, "et_nodes") \
    X(TT_ROWS_MEMTL, MEMTL, "memory_timeline") \
    X(TT_ROWS_STR, STR, "strings")

/* tables (the order of ingest_write.c's enum row_id) */
enum { TT_ROWS_SLICE, TT_ROWS_RUNTIME, TT_ROWS_GPU, TT_ROWS_MEMORY, TT_ROWS_FLOW, TT_ROWS_INSTANT, TT_ROWS_META, TT_ROWS_ET, TT_ROWS_MEMTL, TT_ROWS_STR, TT_ROWS_COUNT };

/* cell indexes, from 0: TT_C_SL_TS, TT_C_GPU_OP_ID, ...; TT_NC_<REC> cells */
#define TT_C_ENUM_(P, NAME, SQL) TT_C_##P##_##NAME,
enum { TT_REC_SLICE(TT_C_ENUM_) TT_NC_SLICE };
enum { TT_REC_RUNTIME(TT_C_ENUM_) TT_NC_RUNTIME };
enum { TT_REC_GPU(TT_C_ENUM_) TT_NC_GPU };
enum { TT_REC_MEMORY(TT_C_ENUM_) TT_NC_MEMORY };
enum { TT_REC_FLOW(TT_C_ENUM_) TT_NC_FLOW };
enum { TT_REC_INSTANT(TT_C_ENUM_) TT_NC_INSTANT };
enum { TT_REC_META(TT_C_ENUM_) TT_NC_META };
enum { TT_REC_ET(TT_C_ENUM_) TT_NC_ET };
enum { TT_REC_MEMTL(TT_C_ENUM_) TT_NC_MEMTL };
enum { TT_REC_STR(TT_C_ENUM_) TT_NC_STR };
#undef TT_C_ENUM_

/* the shorter names consumers have used */
enum { TT_C_SL_DIMS = TT_C_SL_INPUT_DIMS, TT_C_GPU_OP = TT_C_GPU_OP_ID,
       TT_C_MEM_DEVTYPE = TT_C_MEM_DEVICE_TYPE };

#endif
