"""tracetool in Python: every analysis as pandas DataFrames, in process.

    import tracetool
    df = tracetool.averages("run.pt.trace.json.gz", sort_by="self_cpu_time_total")
    bd = tracetool.breakdown("ranks/")            # bd.ranks, bd.families, bd.ops ...
    d = tracetool.diff("base/", "new/")           # d.verdict, d.exit_code, d.metrics, d.rows
    db = tracetool.open("runs.db")                # db.sql("SELECT ..."), db.kernels(by="stream")

Each analysis runs the C library (libtracetool.so, through tt_call in
include/tracetool/call.h) in this process, with the GIL released while it
works; no subprocess is started. INPUT is what the CLI takes: a trace file, a
directory of per-rank traces, a database or a summary. Keyword arguments are
the CLI's long options with '-' written '_' (True for a flag, a list for an
option given several times); DataFrame columns are the keys of the CLI's
`--format json` output. Every failure raises tracetool.Error, whose .message
is the CLI's one line and .exit_code the CLI's exit code.

What each function returns:
  info, breakdown, crosscheck, queue, bandwidth, critical_path, collectives:
      a Result: each list of objects in the JSON is a DataFrame attribute named
      by its key (breakdown(...).ranks), every other key an attribute holding
      its JSON value; .tables, .json, .exit_code.
  averages, kernels: one DataFrame for every trace's table, the trace's keys
      put first (averages: trace_id, path, rank; kernels: trace_id, path, what,
      group_by, ...); df.attrs["summaries"] keeps each table's own keys.
  memtimeline: a DataFrame, index time_us, one column per torch category.
  diff: a Diff (a Result) with .verdict, .exit_code, .metrics and .rows.

tracetool.dask (`python3 -m tracetool.dask`) is separate; importing tracetool
imports neither Dask nor pandas until an analysis runs.
"""
import inspect
import json
import os

from ._lib import Error, call as _call, path as library_path, version as library_version  # noqa: F401

__version__ = "0.1.0"

__all__ = ["Error", "open", "Database", "info", "averages", "kernels", "breakdown", "memtimeline",
           "crosscheck", "diff", "queue", "bandwidth", "critical_path", "collectives",
           "library_path", "library_version"]

_FILTERS = ("time_range", "name", "under", "trace", "rank")
# each command's options (the CLI's long options, '-' -> '_'); those that
# write files (--html, --stacks, --overlay, --save-summary, ...) and --format
# are left out: tt_call refuses them
OPTIONS = {
    "info": ("trace", "row_limit"),
    "averages": ("group_by_shape", "group_by_stack", "stacks_metric", "sort_by", "row_limit", "top",
                 "top_level_only", "no_gpu_annotations", "steps") + _FILTERS,
    "kernels": ("by", "only", "row_limit", "top", "steps") + _FILTERS + ("sequences", "under_op"),
    "breakdown": ("steps",) + _FILTERS + ("by", "kernels", "kernel_wait", "row_limit", "top",
                                          "comm_pattern"),
    "memtimeline": ("device", "no_categories", "et") + _FILTERS,
    "crosscheck": ("key", "row_limit", "strict", "no_store", "trace", "rank"),
    "diff": ("steps", "new_steps", "skip_first", "gate", "threshold", "op_threshold",
             "mem_threshold", "alpha", "fdr", "no_stats", "allow_env_mismatch", "fail_on_inconclusive",
             "step_clock", "top", "match", "rename", "rank_agg", "rank_map"),
    "queue": ("series", "max_queue") + _FILTERS,
    "bandwidth": ("series",) + _FILTERS,
    "critical-path": ("step", "instance", "data_load") + _FILTERS,
    "collectives": ("per_call", "arrival") + _FILTERS,
}


def _run(command, inputs, options):
    text, code = _call(command, inputs, options)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Error("tracetool %s: its JSON output does not parse (%s)" % (command, e), 70) from None
    return doc, code


# pandas (_frames) is imported after the C call has returned: its memory then
# reuses what the analysis freed, so the peak RSS is the analysis's, not the
# sum of both (bench/python_bench.sh)

def _result(command, inputs, options):
    doc, code = _run(command, inputs, options)
    from ._frames import Result
    return Result(command, doc, code)


def _per_trace(command, outer, inputs, options):
    doc, code = _run(command, inputs, options)
    from ._frames import nested
    parents = doc.get(outer) or []
    inner_keys = set(k for p in parents for r in p.get("rows") or [] for k in r)
    keep = []
    for p in parents:
        for k, v in p.items():
            if k != "rows" and k not in keep and k not in inner_keys and not isinstance(v, (list, dict)):
                keep.append(k)
    df = nested(doc, outer, "rows", keep)
    df.attrs["summaries"] = [{k: v for k, v in p.items() if k != "rows"} for p in parents]
    df.attrs["exit_code"] = code
    return df


def info(input, **options):
    """tracetool info: .traces (one row per trace; categories, gpu_streams and
    features as nested values) and .ranks."""
    return _result("info", [input], options)


def averages(input, **options):
    """tracetool averages (torch's key_averages): one DataFrame, the columns
    trace_id, path, rank, then the JSON rows' keys (name, device, count,
    self_cpu_time_total_us, ...), every trace's rows one after another."""
    return _per_trace("averages", "traces", [input], options)


def kernels(input, **options):
    """tracetool kernels: one DataFrame of every table's rows (kernels and
    memory for each trace), each row with its table's trace_id, path, what,
    group_by (and the other keys of the table that its rows lack) put first;
    df.attrs["summaries"]: each table's own keys (its total_ns ...)."""
    return _per_trace("kernels", "summaries", [input], options)


def breakdown(input, **options):
    """tracetool breakdown: .ranks, .families, .ops, .launches,
    .worst_launches (.steps / .streams / .annotations with by=...), and the
    scalars (.by, .step_skew, ...)."""
    return _result("breakdown", [input], options)


def memtimeline(input, **options):
    """tracetool memtimeline: bytes live per category over time (torch's
    export_memory_timeline): index time_us, columns baseline (torch's zero
    column 0), PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION,
    GRADIENT, AUTOGRAD_DETAIL, Unknown."""
    doc, code = _run("memtimeline", [input], options)
    from ._frames import memtimeline as frame
    df = frame(doc)
    df.attrs["exit_code"] = code
    return df


def crosscheck(*inputs, **options):
    """tracetool crosscheck ET KINETO | DB: .pairs, .unpaired_et,
    .unpaired_kineto, .consistent, .summary; .exit_code 1 when inconsistent."""
    return _result("crosscheck", list(inputs), options)


def diff(base, new, **options):
    """tracetool diff BASE NEW: a Diff with .verdict ("unchanged",
    "regressed", "not comparable", ...), .exit_code (the CLI's: 0, 1, 6, ...),
    .summary, .environment, and DataFrames .metrics and .rows. base and new
    are each an INPUT or a list of them (the CLI's BASE -b INPUT... and NEW
    -n INPUT...: several runs or ranks on one side)."""
    b = list(base) if isinstance(base, (list, tuple)) else [base]
    n = list(new) if isinstance(new, (list, tuple)) else [new]
    if not b or not n:
        raise Error("tracetool: diff: BASE and NEW each need an input", 2)
    if len(b) > 1:
        options["base"] = b[1:]
    if len(n) > 1:
        options["new"] = n[1:]
    doc, code = _run("diff", [b[0], n[0]], options)
    from ._frames import Diff
    return Diff(doc, code)


def queue(input, **options):
    """tracetool queue: .streams (or .series with series=True)."""
    return _result("queue", [input], options)


def bandwidth(input, **options):
    """tracetool bandwidth: .rows (or .series with series=True)."""
    return _result("bandwidth", [input], options)


def critical_path(input, **options):
    """tracetool critical-path: the path's scalars (.length_ns, ...),
    .breakdown (a dict) and .segments."""
    return _result("critical-path", [input], options)


def collectives(input, **options):
    """tracetool collectives: .ranks (and .collectives with per_call=True),
    .calls, .instances, .arrival."""
    return _result("collectives", [input], options)


_FUNCS = {"info": info, "averages": averages, "kernels": kernels, "breakdown": breakdown,
          "memtimeline": memtimeline, "crosscheck": crosscheck, "diff": diff, "queue": queue,
          "bandwidth": bandwidth, "critical-path": critical_path, "collectives": collectives}


def _signature(fn, command):
    """help() shows every option as a keyword argument (all still reach
    tt_call through **options, which names any it does not know)."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    params += [inspect.Parameter(o, inspect.Parameter.KEYWORD_ONLY, default=None)
               for o in OPTIONS[command]]
    fn.__signature__ = sig.replace(parameters=params)


for _c, _f in _FUNCS.items():
    _signature(_f, _c)


class Database(object):
    """tracetool.open(INPUT): the analyses bound to one input (a database, a
    trace file, a rank directory or a summary) and, on a database, .sql()."""

    def __init__(self, input):
        self.path = os.fspath(input)
        if not os.path.exists(self.path):
            raise Error("%s: no such file or directory" % self.path, 4)
        self._conn = None

    def sql(self, query, params=()):
        """The rows of an SQL query on the database (Python's sqlite3, opened
        read-only) as a DataFrame; column names as the query names them."""
        import sqlite3
        from ._frames import frame
        if self._conn is None:
            from urllib.parse import quote
            uri = "file:%s?mode=ro" % quote(os.path.abspath(self.path))
            try:
                self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.Error as e:
                self._conn = None
                raise Error("%s: not a database (%s)" % (self.path, e), 3) from None
        try:
            cur = self._conn.execute(query, params)
            names = [d[0] for d in cur.description or ()]
            rows = cur.fetchall()
        except sqlite3.Error as e:
            raise Error("%s: %s" % (self.path, e), 2) from None
        return frame([dict(zip(names, r)) for r in rows]) if rows else \
            __import__("pandas").DataFrame(columns=names)

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "tracetool.open(%r)" % self.path

    def info(self, **options):
        return info(self.path, **options)

    def averages(self, **options):
        return averages(self.path, **options)

    def kernels(self, **options):
        return kernels(self.path, **options)

    def breakdown(self, **options):
        return breakdown(self.path, **options)

    def memtimeline(self, **options):
        return memtimeline(self.path, **options)

    def crosscheck(self, **options):
        return crosscheck(self.path, **options)

    def diff(self, new, **options):
        """this input as BASE, new as NEW"""
        return diff(self.path, new, **options)

    def queue(self, **options):
        return queue(self.path, **options)

    def bandwidth(self, **options):
        return bandwidth(self.path, **options)

    def critical_path(self, **options):
        return critical_path(self.path, **options)

    def collectives(self, **options):
        return collectives(self.path, **options)


def open(input):  # noqa: A001 (tracetool.open, as the issue names it)
    """The analyses bound to INPUT (a database, a trace, a rank directory or
    a summary), and .sql(query) -> DataFrame on a database."""
    return Database(input)
