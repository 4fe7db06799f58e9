"""What tests/cli/test_queue.py, test_bandwidth.py, test_export_counters.py
and test_scaling_counters.py share (Python standard library only): HTA's
window of a trace computed from its raw JSON, running tracetool for JSON.
"""

import gzip
import json
import os
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

FIX = os.path.join(HERE, "..", "fixtures", "hta", "expected")
# the six traces of tests/fixtures/hta/README.md
TRACES = ["trace_filter", "dlrm_8rank", "nccl_parser_config", "df_index_resolver",
          "trace_diff_control", "critical_path_event_sync_multi_stream"]


def ns(v):
    """us as in a trace (a number, or its text) -> exact ns"""
    return int(Decimal(str(v)) * 1000)


def load_events(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)["traceEvents"]


_WINDOWS = {}


def window_args(path):
    """--time-range :T when the trace has two or more ProfilerStep#N: HTA's
    window keeps only what starts before the last step (T its start, read
    from the raw JSON); else nothing"""
    if path not in _WINDOWS:
        ev = load_events(path)
        steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
        _WINDOWS[path] = [] if len(set(e["name"] for e in steps)) < 2 else \
            ["--time-range", ":%dns" % max(ns(e["ts"]) for e in steps)]
    return _WINDOWS[path]


def shared_trace(rel):
    return os.path.join(te.shared_dir(), "testdata", rel)


def have_shared():
    return os.path.isdir(os.path.join(te.shared_dir(), "testdata", "hta"))


def run_json(checker, args):
    """tracetool args (exit 0 checked) -> its JSON, or None"""
    p = te.run_tool(args)
    if not checker.check(p.returncode == 0, " ".join(args[:3]) + ": exit 0",
                         p.stderr.decode()[-300:]):
        return None
    return json.loads(p.stdout.decode())


def close(got, want, rel, absolute=0.0):
    return abs(got - want) <= max(rel * abs(want), absolute)


# HTA's launch names (hta/common/trace_symbol_table.py)
LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
            "cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel",
            "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
            "runFunction - job_prep_and_submit_for_execution"}
# HTA's kinds of copies (get_memory_kernel_type), as tracetool names them
KINDS = ("AtoA", "AtoD", "AtoH", "DtoA", "DtoD", "DtoH", "HtoA", "HtoD", "HtoH", "PtoP")


def copy_kind(name):
    """a GPU activity's kind of copy by its name, None when it is none"""
    if "ncclKernel" in name:
        return None
    if name.startswith("Memset"):
        return "memset"
    if name.startswith("dma"):
        return "memcpy unknown"
    if not name.startswith("Memcpy"):
        return None
    return "memcpy " + name[7:11] if name[6:7] == " " and name[7:11] in KINDS else "memcpy unknown"


def nccl_trace():
    """nccl_parser_config's path and its events as test_filters.py reads
    them (what passes --name, --under, --time-range)"""
    import test_filters as tf
    path = shared_trace(os.path.join("hta", "nccl_parser_config", "nccl_data.json.gz"))
    return path, tf.Trace(path)


def check_filter_cases(checker, cmd, path, db, cases, expect, rows_of, same):
    """cmd with each case's filter options (args, f) on path (and from the
    third case on, db too) against expect(**f): {key: want}; rows_of(JSON)
    gives tracetool's {key: row}, same(row, want) compares one"""
    for n, (args, f) in enumerate(cases):
        want = expect(**f)
        label = "%s %s" % (os.path.basename(path), " ".join(args))
        checker.check(want, label + ": keeps something")
        for inp in (path, db) if n >= 2 else (path,):
            got = run_json(checker, [cmd, "--format", "json"] + args + [inp])
            if got is None:
                continue
            got = rows_of(got)
            checker.eq(sorted(got), sorted(want), label + ": the rows")
            for k, w in sorted(want.items()):
                if k in got:
                    checker.check(same(got[k], w), "%s: %s (independent)" % (label, k),
                                  (got[k], w))
    p = te.run_tool([cmd, "--under", "(", path])
    checker.check(p.returncode == 2 and len(p.stderr.decode().strip().splitlines()) == 1,
                  "%s --under with a bad regex: usage error, one line" % cmd)


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as f:
        return json.load(f)
