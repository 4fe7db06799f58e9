#!/usr/bin/env python3
"""Write the hand-made seed corpus of the fuzz targets.

    tests/fuzz/make_seeds.py [--shared DIR]

testdata/corpus/trace/seed-*  whole files for fuzz_trace / replay_trace:
    one small sample of each real trace vintage (the top-level keys and one
    event of every (ph, cat) kind, taken from the shared test data when it is
    there, else from the built-in snippets), Execution Trace nodes (1.0.1 flat,
    1.0.2/1.1.x chakra), memory-timeline rows, and malformed inputs.
testdata/corpus/json/seed-*   for fuzz_json / replay_json: byte 0 is the read
    size of the streaming half (0 = unlimited), the rest is JSON text.

Files the fuzzers found (found-*) are not touched. Standard library only.
"""
import argparse, gzip, json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "testdata", "corpus")


def short(v, depth=0):
    """Shrink a value: long strings cut, long lists cut to 3 items."""
    if isinstance(v, str):
        return v if len(v) <= 60 else v[:60]
    if isinstance(v, list):
        return [short(x, depth + 1) for x in v[:3]]
    if isinstance(v, dict):
        return {k: short(x, depth + 1) for k, x in list(v.items())[:24]}
    return v


def sample_kineto(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    seen = {}
    for e in events:
        if isinstance(e, dict):
            seen.setdefault((e.get("ph"), e.get("cat"), e.get("name") == "[memory]"), e)
    picked = [short(e) for e in list(seen.values())[:20]]
    if isinstance(doc, list):
        return picked
    out = {}
    for k, v in doc.items():
        out[k] = picked if k == "traceEvents" else short(v)
    return out


def sample_et(path, n=6):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    out = {}
    for k, v in doc.items():
        out[k] = [short(x) for x in v[:n]] if k == "nodes" else short(v)
    return out


def sample_memtl(path, n=12):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return doc[:n]


# built-in fallbacks when the shared data is missing
KINETO_2023 = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42314694656,
                          "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024}],
    "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
    "traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1234, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1234, "tid": 5678, "args": {"name": "thread 5678 (python)"}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1234, "tid": 5678, "ts": 1689360788459677.123,
         "dur": 12.5, "args": {"External id": 7, "Record function id": 3, "Ev Idx": 6, "Sequence number": 11,
                                "Fwd thread id": 0, "Input Dims": [[2, 3], [2, 3], []],
                                "Input type": ["float", "float", "Scalar"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1234, "tid": 5678,
         "ts": 1689360788459680, "dur": 5, "args": {"External id": 7, "cbid": 211, "correlation": 42}},
        {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0,
         "tid": 7, "ts": 1689360788459690, "dur": 2, "args": {
             "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 42, "registers per thread": 20,
             "shared memory": 0, "blocks per SM": 0.1, "warps per SM": 0.4, "grid": [1, 1, 1],
             "block": [128, 1, 1], "est. achieved occupancy %": 6, "External id": 7}},
        {"ph": "s", "id": 42, "pid": 1234, "tid": 5678, "ts": 1689360788459680, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 1689360788459690, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1234, "tid": 5678,
         "ts": 1689360788459700, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512,
                                          "Addr": 139715273293824, "Device Id": 0, "Device Type": 1}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7,
         "ts": 1689360788459710, "dur": 1, "args": {"device": 0, "context": 1, "stream": 7, "correlation": 43,
                                                    "bytes": 4096, "memory bandwidth (GB/s)": 1.5}},
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler",
         "ts": 1689360788459600},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 1689360808308238},
    ],
    "traceName": "rank0.pt.trace.json",
    "displayTimeUnit": "ms",
    "baseTimeNanoseconds": 1689360000000000000,
}

ET_101 = {"schema": "1.0.1", "pid": 59811, "time": "2023-09-07 16:09:59", "start_ts": 6672645, "nodes": [
    {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "rf_id": 0, "parent": 1, "fw_parent": 0,
     "seq_id": -1, "scope": 7, "tid": 1, "fw_tid": 0, "op_schema": "", "inputs": [], "input_shapes": [],
     "input_types": [], "outputs": [], "output_shapes": [], "output_types": []},
    {"name": "aten::as_strided", "id": 8, "rf_id": 4, "parent": 7, "fw_parent": 0, "seq_id": -1, "scope": 0,
     "tid": 1, "fw_tid": 0, "op_schema": "aten::as_strided(Tensor(a) self, SymInt[] size) -> Tensor(a)",
     "inputs": [[5, 6, 0, 112, 4, "cuda:0"], [48], [1], 0], "input_shapes": [[112], [[]], [[]], []],
     "input_types": ["Tensor(float)", "GenericList[Int]", "GenericList[Int]", "Int"],
     "outputs": [[9, 6, 0, 48, 4, "cuda:0"]], "output_shapes": [[48]], "output_types": ["Tensor(float)"]}],
    "finish_ts": 6674697}

ET_CHAKRA = {"schema": "1.1.1-chakra.0.0.4", "pid": 793657, "time": "2025-06-26 13:28:44", "start_ts": 1736345358,
             "nodes": [
    {"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1,
     "inputs": {"values": [], "shapes": [], "types": [], "strides": []},
     "outputs": {"values": [], "shapes": [], "types": [], "strides": []},
     "attrs": [{"name": "rf_id", "type": "uint64", "value": 0}, {"name": "fw_parent", "type": "uint64", "value": 0},
               {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": "uint64", "value": 7},
               {"name": "tid", "type": "uint64", "value": 1}, {"name": "fw_tid", "type": "uint64", "value": 0},
               {"name": "op_schema", "type": "string", "value": ""},
               {"name": "kernel_backend", "type": "string", "value": "triton"}]},
    {"id": 4, "name": "aten::empty", "ctrl_deps": 2,
     "inputs": {"values": [[1], 6, 0, "cpu", False, "<None>"], "shapes": [[[]], [], [], [], [], []],
                "types": ["GenericList[Int]", "Int", "Int", "Device", "Bool", "None"], "strides": [[], [], [], [], [], []]},
     "outputs": {"values": [[5, 6, 0, 1, 4, "cpu"]], "shapes": [[1]], "types": ["Tensor(float)"], "strides": [[1]]},
     "attrs": [{"name": "rf_id", "type": "uint64", "value": 2}, {"name": "seq_id", "type": "int64", "value": -1},
               {"name": "op_schema", "type": "string", "value": "aten::empty.memory_format(SymInt[] size) -> Tensor"}]}],
    "finish_ts": 1736345385}

MEMTL = [[-1, 1, 37888, 7], [-1, 1, 512, 7], [1689360788459677000, 2, 512, None], [1689360788459677100, 3, 512, 0],
         [1689360788459677200, 0, 0, 4]]


def dump(v):
    return json.dumps(v, separators=(", ", ": ")).encode()


def trace_seeds(shared):
    s = {}
    def real(name, fn, rel, fallback):
        p = os.path.join(shared, "testdata", rel) if shared else None
        if p and os.path.exists(p):
            try:
                s[name] = dump(fn(p))
                return
            except Exception as e:  # fall back to the snippet
                print(f"make_seeds: {rel}: {e}", file=sys.stderr)
        if fallback is not None:
            s[name] = dump(fallback)

    real("seed-kineto-2020-12-array.json", sample_kineto, "kineto/tb_plugin_2020-12_array_format/worker0.pt.trace.json.gz",
         [{"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 67844, "tid": "4093687616",
           "ts": 1606910596297023, "dur": 13, "args": {"Input dims": [[], []], "External id": 2}}])
    real("seed-kineto-2021-02.json", sample_kineto, "kineto/tb_plugin_2021-02/worker0.pt.trace.json.gz", None)
    real("seed-kineto-2021-06-memory.json", sample_kineto, "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz", None)
    real("seed-kineto-2023-nccl.json", sample_kineto, "hta/nccl_parser_config/nccl_data.json.gz", KINETO_2023)
    real("seed-kineto-legacy-cats.json", sample_kineto, "hta/trace_file_list/inference_rank_1.json.gz", None)
    real("seed-kineto-large-integer.json", sample_kineto, "hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz", None)
    real("seed-kineto-rocm.json", sample_kineto, "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", None)
    real("seed-kineto-triton.json", sample_kineto, "hta/triton_example/triton_example.json.gz", None)
    real("seed-kineto-cupti-range.json", sample_kineto, "hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", None)
    real("seed-et-1.0.1.json", sample_et, "param/dlrm_8rank/et/dlrm_eg_0.json.gz", ET_101)
    real("seed-et-1.0.2-chakra.json", sample_et, "chakra/1.0.2-chakra.0.0.4.json.gz", None)
    real("seed-et-1.1.1-chakra.json", sample_et, "param/et_only/pt2_et.json.gz", ET_CHAKRA)
    real("seed-memtl-raw.json", sample_memtl, "hta/memory_analysis/memory_timeline.raw.gz", MEMTL)

    k = dump(KINETO_2023)
    s["seed-kineto-builtin.json"] = k
    s["seed-kineto-builtin.json.gz"] = gzip.compress(k, mtime=0)
    s["seed-gzip-truncated.json.gz"] = gzip.compress(k, mtime=0)[:-40]
    s["seed-gzip-two-members.json.gz"] = gzip.compress(k[:200], mtime=0) + gzip.compress(k[200:], mtime=0)
    s["seed-truncated-mid-event.json"] = k[: len(k) * 2 // 3]
    s["seed-truncated-in-string.json"] = b'{"traceEvents": [{"ph": "X", "name": "aten::ad'
    s["seed-empty.json"] = b""
    s["seed-whitespace.json"] = b" \n\t\r\n "
    s["seed-bom.json"] = b"\xef\xbb\xbf" + dump({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]})
    s["seed-trailing-commas.json"] = b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2,}, ], }'
    s["seed-deep-args.json"] = (b'{"traceEvents": [{"ph": "X", "name": "deep", "ts": 1, "args": {"x": '
                                + b"[" * 600 + b"]" * 600 + b"}}]}")
    s["seed-bad-utf8-ctrl.json"] = (b'{"traceEvents": [{"ph": "X", "name": "bad\xff\xfe\xc3(\xe2\x82 utf8", '
                                    b'"cat": "ctl\x01\x1f\ttab", "ts": 1, "dur": 1, "pid": "Spans", "tid": "stream 7", '
                                    b'"args": {"k\xc0\xafey": "\xed\xa0\x80 surrogate", "nul": "a\\u0000b", '
                                    b'"esc": "\\ud83d\\ude00 \\ud800 \\udc00x \\u00e9\\/\\b\\f"}}]}')
    s["seed-huge-numbers.json"] = (b'{"traceEvents": [{"ph": "X", "name": "n", "ts": 1e400, "dur": -1e-400, '
                                   b'"pid": 99999999999999999999999, "tid": -9223372036854775808, '
                                   b'"args": {"External id": 18446744073709551616, "correlation": 9223372036854775807, '
                                   b'"Comms Id": 123456789012345678901234567890, "f": 1.7976931348623157e308, "z": -0.0}},'
                                   b'{"ph": "X", "name": "t", "ts": "1689360788459677.123456789", "dur": "12.5", '
                                   b'"pid": "123", "tid": " 42 ", "id": "0x1f"}]}')
    s["seed-nan-inf.json"] = (b'{"traceEvents": [{"ph": "X", "name": "nan", "ts": NaN, "dur": Infinity, '
                              b'"args": {"a": -Infinity, "b": [NaN, Infinity], "Input Dims": [[NaN]]}}]}')
    s["seed-odd-shapes.json"] = (b'{"traceEvents": [1, "x", null, [], {"ph": "XX", "name": 5, "cat": [], '
                                 b'"ts": "abc", "args": []}, {}, {"ph": "B", "name": "b", "ts": 1, "pid": 1, "tid": 1}, '
                                 b'{"ph": "E", "ts": 2, "pid": 1, "tid": 1}], "traceEvents": {"dup": 1}, '
                                 b'"schemaVersion": "1", "baseTimeNanoseconds": "x"}')
    s["seed-keys-after-events.json"] = (b'{"traceEvents": [{"ph": "i", "s": "p", "name": "x", "ts": 0}], '
                                        b'"deviceProperties": [{"id": 0}], "baseTimeNanoseconds": 1000, "extra": {"a": [1, {"b": null}]}}')
    s["seed-et-odd.json"] = (b'{"nodes": [{"id": "x", "name": null, "parent": -1, "rf_id": 1e3, '
                             b'"inputs": {"values": [1], "shapes": 2}, "attrs": [{"name": "rf_id", "value": "7"}, 3, '
                             b'{"name": 5}, {"type": "int"}]}, 7, {"id": 9, "ctrl_deps": 8, "extra_key": [1, 2]}], '
                             b'"schema": "1.1.1-chakra.0.0.4", "pid": 1}')
    s["seed-memtl-odd.json"] = b'[[1, 2, 3], [1, 2, 3, 4, 5], [null, 1, 2, 3], ["1", 1, 2, 3], [1e20, -1, 1.5, -7], 5, [], [[1]]]'
    s["seed-not-a-trace.json"] = b'{"foo": [1, 2, 3], "bar": "baz"} trailing garbage'
    s["seed-scalar.json"] = b"12345"
    return s


def json_seeds():
    # first byte: read size of the streaming half
    j = {}
    def add(name, text, rd=b" "):
        j[name] = rd + text
    add("seed-object.json", b'{"a": 1, "b": [true, false, null], "c": {"d": "e"}, "f": -1.5e-3}')
    add("seed-values-1byte.json", b' {"a":"x\\"}y","b":[1,{"c":"\\\\"}]} ["]", "[{"] "s\\"t" 12345 true null {} [] -1.5e3 ', b"\x01")
    add("seed-values-unlimited.json", b'[1,2,[3,[4,[5]]]] {"k":{"k":{"k":{}}}} "str" 0 -0 false', b"\x00")
    add("seed-scalar-at-eof.json", b"   123456789", b"\x02")
    add("seed-numbers.json", b"[0, -0, 1e5, 1E+5, 1e-5, 0.5, -12.34e+56, 9223372036854775807, -9223372036854775808, "
        b"9223372036854775808, 18446744073709551616, 1e400, 01, 1., .5, -, +1, 1e, 0x10, 1_000]")
    add("seed-nan-inf.json", b"[NaN, Infinity, -Infinity, nan, inf, -NaN]")
    add("seed-strings.json", b'["", "a\\"b", "\\\\", "\\/", "\\b\\f\\n\\r\\t", "\\u0041\\u00e9\\u20ac", "\\ud83d\\ude00", '
        b'"\\ud800", "\\udc00", "\\ud800\\u0041", "\\u00", "\\x", "\\u0000"]')
    add("seed-bad-utf8.json", b'["\xff", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", '
        b'"\xc3", "\xe2\x82", "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"]')
    add("seed-ctrl-chars.json", b'{"k\x01": "a\x00b\x1f\tc\nd", "\x7f": 1}')
    add("seed-deep-512.json", b"[" * 512 + b"]" * 512, b"\x07")
    add("seed-deep-513.json", b"[" * 513 + b"]" * 513, b"\x07")
    add("seed-deep-objects.json", b'{"a":' * 600 + b"1" + b"}" * 600, b"\x03")
    add("seed-trailing-commas.json", b'{"a": [1, 2,], "b": 1,}')
    add("seed-bom.json", b'\xef\xbb\xbf{"a": 1}')
    add("seed-truncated.json", b'{"a": [1, 2, {"b": "unterminated', b"\x05")
    add("seed-backslash-end.json", b'"abc\\', b"\x01")
    add("seed-unbalanced.json", b'{"a": 1]} ]]] }}}', b"\x04")
    add("seed-empty.json", b"")
    add("seed-only-byte.json", b"", b"\x09")
    add("seed-whitespace.json", b" \t\r\n \n", b"\x01")
    add("seed-literals.json", b"[true, false, null, tru, nul, fals, True, NULL]")
    add("seed-dup-keys.json", b'{"a": 1, "a": 2, "": 3, "\\u0000": 4}')
    add("seed-missing-colon.json", b'{"a" 1, "b": 2}')
    add("seed-long-string.json", b'"' + b"x" * 3000 + b'\\n' + b"y" * 1000 + b'"', b"\x11")
    return j


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.environ.get("TT_SHARED", os.path.join(ROOT, "..", "shared")))
    a = ap.parse_args()
    shared = a.shared if os.path.isdir(a.shared) else None
    for sub, seeds in (("trace", trace_seeds(shared)), ("json", json_seeds())):
        d = os.path.join(CORPUS, sub)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d):
            if name.startswith("seed-") and name not in seeds:
                os.remove(os.path.join(d, name))
        for name, data in sorted(seeds.items()):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(f"make_seeds: {len(seeds)} seeds in {d} ({sum(map(len, seeds.values()))} bytes)")


if __name__ == "__main__":
    main()
