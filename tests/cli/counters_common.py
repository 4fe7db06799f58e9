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


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as f:
        return json.load(f)
