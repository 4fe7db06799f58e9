"""`tracetool summarize` fanned out over a Dask distributed cluster.

    python3 -m tracetool.dask [--scheduler ADDRESS --workdir DIR | --workers N]
                              [--tracetool PATH] [--fan-in K] -o OUT INPUT...

INPUT: trace files or directories of them. A directory is expanded the way
tracetool expands one (every *.json and *.gz below it, recursively, name order,
dot-names skipped, each file once); a path this machine cannot see is handed
to a worker as it is (tracetool summarize reads a file or a whole directory).

Each file becomes one Dask task that runs `tracetool summarize` on the worker
(a subprocess; the task carries the path, not the bytes, so the worker must be
able to read it) into a work directory that the workers and this client share
(a temporary directory with a local cluster; --workdir on a shared filesystem
with --scheduler). As summaries come in they are merged in a tree, K at a time
(--fan-in, default 8), by `tracetool merge` tasks; the root is copied to OUT
whole or not at all (written beside OUT and renamed). A summary is compressed
when its name ends in .gz.

Without --scheduler a LocalCluster of N worker processes (--workers, default
the number of CPUs) with one thread each is started, so a worker runs one
tracetool process at a time and memory per worker stays what one tracetool
summarize needs. With --scheduler, start the workers with `--nthreads 1` for
the same bound.

A file whose summarize fails is reported on stderr as
"tracetool.dask: PATH: MESSAGE" (MESSAGE: tracetool's own) and left out; the
others are merged and OUT is written. When stderr is a terminal a progress
line ("N of M files") is shown.

Exit status: 0 every file summarized and merged; 1 some files failed (OUT
holds the others); 2 usage or setup error (bad option, no input files,
tracetool not found, scheduler unreachable); 3 nothing written (no file
succeeded, or a merge failed).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PROG = "tracetool.dask"
EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, EXIT_NOTHING = 0, 1, 2, 3


class SetupError(Exception):
    """An error before any file is processed (exit 2)."""


# ------------------------------------------------------------------ inputs

def _trace_name(name):
    return (len(name) > 5 and name.endswith(".json")) or (len(name) > 3 and name.endswith(".gz"))


def _walk(d, depth, seen_dirs, seen_files, out):
    """tracetool's directory walk (common/fs.c tt_walk_traces): entries in
    byte order, dot-names skipped, directories entered where they appear,
    each directory and file (device, inode) once."""
    try:
        names = sorted(os.listdir(os.fsencode(d)))
    except OSError as e:
        raise SetupError("%s: cannot read directory: %s" % (d, e.strerror))
    base = d
    while len(base) > 1 and base.endswith("/"):
        base = base[:-1]
    for bname in names:
        if bname.startswith(b"."):
            continue
        name = os.fsdecode(bname)
        path = base + "/" + name
        try:
            st = os.stat(path)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if os.path.isdir(path):
            if key in seen_dirs or depth > 64:
                continue
            seen_dirs.add(key)
            _walk(path, depth + 1, seen_dirs, seen_files, out)
        elif os.path.isfile(path) and _trace_name(name):
            if key not in seen_files:
                seen_files.add(key)
                out.append(path)


def expand_inputs(inputs):
    """The list of paths to summarize, in order. A directory expands to its
    trace files; a file is kept; a path this machine cannot stat is kept as
    it is (a worker may see it)."""
    out, seen_dirs, seen_files = [], set(), set()
    for p in inputs:
        try:
            st = os.stat(p)
        except OSError:
            out.append(p)
            continue
        key = (st.st_dev, st.st_ino)
        if os.path.isdir(p):
            if key not in seen_dirs:
                seen_dirs.add(key)
                before = len(out)
                _walk(p, 0, seen_dirs, seen_files, out)
                if len(out) == before:
                    raise SetupError("%s: no trace files (*.json, *.gz) in the directory" % p)
        elif key not in seen_files:
            seen_files.add(key)
            out.append(p)
    return out


# ------------------------------------------------------------------ tasks (run on the workers)

def _message(stderr, rc):
    """tracetool's message: its last non-empty stderr line, less the
    'tracetool: ' prefix."""
    lines = [ln.strip() for ln in stderr.replace("\r", "\n").splitlines() if ln.strip()]
    if not lines:
        return "tracetool exited with status %d and no message" % rc
    msg = lines[-1]
    for prefix in ("tracetool: ",):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return msg


def _run_tracetool(tracetool, args, cwd):
    """(ok, message). cwd: the client's working directory, used when the
    worker has it too, so relative paths mean what they meant there."""
    exe = tracetool if os.sep in tracetool else (shutil.which(tracetool) or tracetool)
    try:
        p = subprocess.run([exe] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, cwd=cwd if cwd and os.path.isdir(cwd) else None)
    except OSError as e:
        return False, "cannot run %s: %s" % (tracetool, e.strerror)
    if p.returncode != 0:
        return False, _message(p.stderr.decode("utf-8", "replace"), p.returncode)
    return True, ""


def summarize_task(tracetool, path, out, cwd):
    """One rank file -> its summary at out. Returns (path, out or None, message)."""
    ok, msg = _run_tracetool(tracetool, ["summarize", "-o", out, path], cwd)
    if msg.startswith(path + ": "):  # the line names the path once
        msg = msg[len(path) + 2:]
    return (path, out if ok else None, msg)


def merge_task(tracetool, inputs, out, cwd):
    """Summaries -> one merged summary at out; the inputs are removed once
    merged. Returns (out or None, message)."""
    ok, msg = _run_tracetool(tracetool, ["merge", "-o", out] + list(inputs), cwd)
    if ok:
        for p in inputs:
            try:
                os.unlink(p)
            except OSError:
                pass
    return (out if ok else None, msg)


def check_tracetool(tracetool):
    """On a worker: None when tracetool runs there, else the problem."""
    exe = tracetool if os.sep in tracetool else shutil.which(tracetool)
    if not exe or not os.path.isfile(exe) or not os.access(exe, os.X_OK):
        return "tracetool not found or not executable: %s" % tracetool
    return None


# ------------------------------------------------------------------ client side

class Progress(object):
    """'N of M files' on stderr, rewritten in place, only on a terminal."""

    def __init__(self, total, stream=None):
        self.stream = stream or sys.stderr
        self.total = total
        self.done = 0
        self.tty = self.stream.isatty()
        self.shown = False

    def step(self):
        self.done += 1
        if self.tty:
            self.stream.write("\r%s: %d of %d files" % (PROG, self.done, self.total))
            self.stream.flush()
            self.shown = True

    def clear(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False

    def say(self, line):
        self.clear()
        self.stream.write(line + "\n")
        self.stream.flush()


def _final_name(out):
    return "root.summary.json.gz" if out.endswith(".gz") else "root.summary.json"


def _write_whole(src, out):
    """Copy src to out: beside out first, renamed when complete."""
    d = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(out) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f, open(src, "rb") as s:
            shutil.copyfileobj(s, f, 1 << 20)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def run_tree(client, tracetool, files, workdir, out_name, fan_in, progress, cwd):
    """Summarize every file and merge the summaries in a tree. Returns
    (root path or None, failures [(path, message)], merge error or None)."""
    from distributed import as_completed

    sdir = os.path.join(workdir, "s")
    mdir = os.path.join(workdir, "m")
    os.makedirs(sdir, exist_ok=True)
    os.makedirs(mdir, exist_ok=True)
    width = max(6, len(str(len(files))))
    meta = {}
    futs = []
    for i, path in enumerate(files):
        o = os.path.join(sdir, "%0*d.summary.json.gz" % (width, i + 1))
        f = client.submit(summarize_task, tracetool, path, o, cwd, key="summarize-%d-%s" % (i + 1, os.path.basename(workdir)),
                          pure=False)
        meta[f.key] = ("s", 0, path)
        futs.append(f)
    ready = {}       # level -> [summary path] waiting for a merge
    failures = []
    merge_error = [None]
    nmerge = [0]
    ac = as_completed(futs)

    def submit_merge(inputs, level, name=None):
        nmerge[0] += 1
        o = os.path.join(workdir if name else mdir, name or "L%d-%06d.summary.json.gz" % (level, nmerge[0]))
        f = client.submit(merge_task, tracetool, inputs, o, cwd, pure=False,
                          key="merge-%d-%s" % (nmerge[0], os.path.basename(workdir)))
        meta[f.key] = ("m", level, inputs)
        return f

    for f in ac:
        kind, level, what = meta[f.key]
        try:
            res = f.result()
        except Exception as e:  # a worker died, the task could not run
            res = None
            err = "%s: %s" % (type(e).__name__, e)
        if kind == "s":
            progress.step()
            if res is None:
                failures.append((what, err))
            elif res[1] is None:
                failures.append((what, res[2]))
            else:
                ready.setdefault(0, []).append(res[1])
            if res is None or res[1] is None:
                progress.say("%s: %s: %s" % (PROG, failures[-1][0], failures[-1][1]))
        else:
            if res is None or res[0] is None:
                if merge_error[0] is None:
                    merge_error[0] = "merge of %s: %s" % (" ".join(what), err if res is None else res[1])
                continue
            ready.setdefault(level, []).append(res[0])
        if merge_error[0] is None:
            for lvl in sorted(ready):
                while len(ready[lvl]) >= fan_in:
                    batch, ready[lvl] = ready[lvl][:fan_in], ready[lvl][fan_in:]
                    ac.add(submit_merge(batch, lvl + 1))
    progress.clear()
    if merge_error[0] is not None:
        return None, failures, merge_error[0]
    # what is left: fewer than fan_in at each level; reduce, then one final merge
    left = [p for lvl in sorted(ready) for p in ready[lvl]]
    if not left:
        return None, failures, None
    while len(left) > fan_in:
        batch = [submit_merge(left[i:i + fan_in], 99) for i in range(0, len(left), fan_in)]
        left = []
        for f in batch:
            res = f.result()
            if res[0] is None:
                return None, failures, "merge of %s: %s" % (" ".join(meta[f.key][2]), res[1])
            left.append(res[0])
    res = submit_merge(left, 100, out_name).result()
    if res[0] is None:
        return None, failures, "merge of %s: %s" % (" ".join(left), res[1])
    return res[0], failures, None


def _resolve_tracetool(arg, remote):
    """The tracetool the tasks run: --tracetool, else $TRACETOOL, else
    `tracetool` on PATH. Checked here for a local cluster (an absolute path
    then), on every worker for a remote one."""
    t = arg or os.environ.get("TRACETOOL") or "tracetool"
    if remote:
        return t
    if os.sep in t:
        if not (os.path.isfile(t) and os.access(t, os.X_OK)):
            raise SetupError("tracetool not found or not executable: %s (give --tracetool PATH)" % t)
        return os.path.abspath(t)
    w = shutil.which(t)
    if not w:
        raise SetupError("tracetool not found on PATH: %s (give --tracetool PATH)" % t)
    return os.path.abspath(w)


def _parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m tracetool.dask",
        description="Run `tracetool summarize` on every rank file over a Dask cluster and merge "
                    "the summaries into OUT (exit: 0 all, 1 some files failed, 2 usage, "
                    "3 nothing written).")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786); needs --workdir")
    g.add_argument("--workers", type=int, metavar="N",
                   help="a LocalCluster of N single-threaded worker processes (default: CPUs)")
    ap.add_argument("--workdir", metavar="DIR",
                    help="where summaries are written, shared by the workers and this client "
                         "(default with a local cluster: a temporary directory)")
    ap.add_argument("--tracetool", metavar="PATH",
                    help="the tracetool to run (default: $TRACETOOL, else tracetool on PATH)")
    ap.add_argument("--fan-in", type=int, default=8, metavar="K",
                    help="summaries per merge task (default 8)")
    ap.add_argument("--connect-timeout", type=float, default=10.0, metavar="S",
                    help="seconds to reach the scheduler and its first worker (default 10)")
    ap.add_argument("-o", "--output", required=True, metavar="OUT", help="the merged summary")
    ap.add_argument("inputs", nargs="+", metavar="INPUT", help="trace files or directories")
    a = ap.parse_args(argv)
    if a.scheduler and not a.workdir:
        ap.error("--scheduler needs --workdir DIR on a filesystem the workers share")
    if a.workers is not None and a.workers < 1:
        ap.error("--workers must be at least 1")
    if a.fan_in < 2:
        ap.error("--fan-in must be at least 2")
    if a.connect_timeout <= 0:
        ap.error("--connect-timeout must be positive")
    return a


def _connect(a, nfiles):
    """(client, cluster or None)"""
    import logging
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise SetupError("Dask distributed is not installed for %s (%s): apt-get install "
                         "python3-distributed, or pip install distributed" % (sys.executable, e))
    if a.scheduler:
        try:
            client = Client(a.scheduler, timeout=a.connect_timeout)
        except (OSError, TimeoutError, ValueError) as e:
            raise SetupError("cannot reach the Dask scheduler at %s: %s" % (a.scheduler, e))
        try:
            client.wait_for_workers(1, timeout=a.connect_timeout)
        except Exception:
            client.close()
            raise SetupError("the Dask scheduler at %s has no workers" % a.scheduler)
        try:  # the workers need not have this package: its tasks travel by value
            import cloudpickle
            cloudpickle.register_pickle_by_value(sys.modules[__name__])
        except (ImportError, AttributeError, ValueError):
            pass
        return client, None
    n = a.workers or os.cpu_count() or 1
    n = max(1, min(n, nfiles))
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def main(argv=None):
    a = _parse_args(sys.argv[1:] if argv is None else argv)
    out = a.output
    if os.path.isdir(out):
        return _fail(EXIT_USAGE, "%s: is a directory" % out)
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        return _fail(EXIT_USAGE, "%s: its directory does not exist" % out)
    client = cluster = None
    workdir = None
    try:
        files = expand_inputs(a.inputs)
        tracetool = _resolve_tracetool(a.tracetool, bool(a.scheduler))
        if a.workdir:
            if not os.path.isdir(a.workdir):
                raise SetupError("%s: --workdir is not a directory" % a.workdir)
            workdir = tempfile.mkdtemp(prefix="tracetool-dask-", dir=os.path.abspath(a.workdir))
        else:
            workdir = tempfile.mkdtemp(prefix="tracetool-dask-")
        client, cluster = _connect(a, len(files))
        if a.scheduler:
            bad = {w: m for w, m in client.run(check_tracetool, tracetool).items() if m}
            if bad:
                raise SetupError("on worker%s %s: %s" % ("s" if len(bad) > 1 else "", ", ".join(sorted(bad)),
                                                         next(iter(bad.values()))))
        progress = Progress(len(files))
        root, failures, merr = run_tree(client, tracetool, files, workdir, _final_name(out),
                                        a.fan_in, progress, os.getcwd())
        if merr:
            return _fail(EXIT_NOTHING, merr + "; %s not written" % out)
        if root is None:
            return _fail(EXIT_NOTHING, "no file was summarized; %s not written" % out)
        _write_whole(root, out)
        if failures:
            sys.stderr.write("%s: %d of %d files failed; %s holds the other %d\n"
                             % (PROG, len(failures), len(files), out, len(files) - len(failures)))
            return EXIT_SOME_FAILED
        return EXIT_OK
    except SetupError as e:
        return _fail(EXIT_USAGE, str(e))
    except KeyboardInterrupt:
        return _fail(130, "interrupted; %s not written" % out)
    except OSError as e:
        return _fail(EXIT_NOTHING, "%s: %s; %s not written" % (e.filename or out, e.strerror, out))
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _fail(code, msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    # run as tracetool.dask (not __main__) so the tasks pickle by reference
    # to an importable module on local workers
    from tracetool import dask as _self
    sys.exit(_self.main())
