"""The CLI's JSON as pandas DataFrames.

A list of JSON objects becomes a DataFrame whose columns are the objects' keys
in the order they first appear (a key an object lacks is missing: NaN / <NA>).
Columns keep the JSON's values exactly: integers stay int64 (pandas' nullable
Int64 when the column has nulls, so 19-digit nanosecond times are never
rounded through float64), booleans bool (nullable boolean with nulls), numbers
with a fraction float64, strings object; a nested object or list stays a
Python dict / list in its cell.
"""
import platform


def _no_uname_subprocess():
    """Debian's pandas calls platform.uname()[4] on import, and the first
    platform.uname() runs `uname -p` in a subprocess for .processor (Python
    3.9+, Linux). The analyses start no process: the processor is filled in
    first with what `uname -p` says on Linux ("unknown", which platform
    reports as ''), unless something has asked already."""
    u = platform.uname()
    d = getattr(u, "__dict__", None)
    if d is not None and "processor" not in d and type(u).__dict__.get("processor") is not None:
        d["processor"] = ""


_no_uname_subprocess()
import pandas as pd  # noqa: E402

_I64 = (-(1 << 63), (1 << 63) - 1)


def column(values):
    """A pandas Series (no index) holding values exactly."""
    present = [v for v in values if v is not None]
    nulls = len(present) != len(values)
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean") if nulls else pd.array(values, dtype=bool)
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if all(_I64[0] <= v <= _I64[1] for v in present):
            return pd.array(values, dtype="Int64") if nulls else pd.array(values, dtype="int64")
        return pd.array(values, dtype=object)
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        if all(isinstance(v, float) or abs(v) <= (1 << 53) for v in present):
            return pd.array([float("nan") if v is None else float(v) for v in values], dtype="float64")
    return pd.array(values, dtype=object)


def frame(rows, prefix=None):
    """DataFrame of a list of objects; prefix: [(name, [value per row])]
    columns put first (a row key of the same name is left out)."""
    prefix = list(prefix or ())
    taken = set(p for p, _ in prefix)
    cols, order = {}, []
    for n, r in enumerate(rows):
        for k in r:
            if k not in cols and k not in taken:
                cols[k] = [None] * n
                order.append(k)
        for k in order:
            cols[k].append(r.get(k))
    data = {p: column(list(v)) for p, v in prefix}
    data.update((k, column(cols[k])) for k in order)
    return pd.DataFrame(data, columns=[p for p, _ in prefix] + order)


def nested(doc, outer, inner, keep):
    """One DataFrame of doc[outer][i][inner] rows, each with its parent's
    `keep` keys put first (the per-trace tables of averages and kernels)."""
    parents = doc.get(outer) or []
    rows, pref = [], {k: [] for k in keep}
    for p in parents:
        for r in p.get(inner) or []:
            rows.append(r)
            for k in keep:
                pref[k].append(p.get(k))
    return frame(rows, prefix=[(k, pref[k]) for k in keep])


def is_table(v):
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


class Result(object):
    """A command's JSON: each list of objects at its top level is a DataFrame
    attribute named by its key (result.ranks, result.families), every other
    key an attribute holding the JSON value (a number, string, dict, ...).
    result.tables: {key: DataFrame}; result.json: the parsed JSON;
    result.exit_code: the CLI's exit code for it."""

    def __init__(self, command, doc, exit_code):
        self.command = command
        self.json = doc
        self.exit_code = exit_code
        self.tables = {}
        self.values = {}
        for k, v in (doc.items() if isinstance(doc, dict) else ()):
            if is_table(v):
                self.tables[k] = frame(v)
            else:
                self.values[k] = v

    def __getattr__(self, name):
        d = self.__dict__
        if "tables" in d and name in d["tables"]:
            return d["tables"][name]
        if "values" in d and name in d["values"]:
            return d["values"][name]
        raise AttributeError("%s result has no %r (tables: %s; values: %s)" % (
            d.get("command"), name, ", ".join(d.get("tables", {})) or "none",
            ", ".join(d.get("values", {})) or "none"))

    def __getitem__(self, name):
        return self.__getattr__(name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self.tables) | set(self.values))

    def keys(self):
        return list(self.json.keys()) if isinstance(self.json, dict) else []

    def __repr__(self):
        parts = ["%s: %d x %d" % (k, t.shape[0], t.shape[1]) for k, t in self.tables.items()]
        vals = ["%s=%r" % (k, v) for k, v in self.values.items() if not isinstance(v, (dict, list))]
        return "<tracetool %s: %s%s>" % (self.command, ", ".join(vals + parts),
                                        "" if self.exit_code == 0 else "; exit code %d" % self.exit_code)

    def _repr_html_(self):
        out = ["<p><b>tracetool %s</b> %s</p>" % (self.command, ", ".join(
            "%s=%s" % (k, v) for k, v in self.values.items() if not isinstance(v, (dict, list))))]
        for k, t in self.tables.items():
            out.append("<p><code>.%s</code> (%d rows)</p>%s" % (k, len(t), t.head(10).to_html()))
        return "\n".join(out)


class Diff(Result):
    """tracetool diff: .verdict, .exit_code (0 unchanged, 1 regressed, 6 not
    comparable ...), .summary, .environment, .coverage, and the DataFrames
    .metrics and .rows."""

    def __init__(self, doc, exit_code):
        super().__init__("diff", doc, exit_code)
        for k in ("metrics", "rows"):
            if k not in self.tables:
                self.tables[k] = frame(doc.get(k) or [])
        self.verdict = doc.get("verdict")

    def __bool__(self):
        return True


MEMTL_COLUMNS = ("baseline", "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION",
                 "GRADIENT", "AUTOGRAD_DETAIL", "Unknown")


def memtimeline(doc):
    """torch's [times, sizes] as a DataFrame: index time_us, one column per
    category in torch's order (column 0 torch's zero baseline), bytes live."""
    if isinstance(doc, dict):
        times, sizes = doc.get("times") or [], doc.get("sizes") or []
    else:
        times, sizes = (doc[0], doc[1]) if len(doc) == 2 else ([], [])
    width = len(sizes[0]) if sizes else len(MEMTL_COLUMNS)
    names = list(MEMTL_COLUMNS[:width]) + ["column_%d" % i for i in range(len(MEMTL_COLUMNS), width)]
    df = pd.DataFrame(sizes, columns=names, dtype="int64") if sizes else \
        pd.DataFrame({n: pd.array([], dtype="int64") for n in names})
    df.index = pd.Index(pd.array(times, dtype="int64"), name="time_us")
    return df
