#!/usr/bin/env python3
"""tt_call (tracetool/call.h) against the tracetool program.

For every command tt_call takes, on shared traces and several option sets:
the bytes tt_call returns equal `tracetool CMD --format json ...` stdout, and
its exit code equals the program's, errors included (usage 2, bad input 3,
missing file 4). The options object is turned into the program's argv here
(key -> --key with '-' for '_', true -> a flag, a list -> the option given
once per element), so neither side derives from the other. tt_call is
loaded from libtracetool.so with ctypes (tests/tools/tt_call_driver.py).
"""
import os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import tt_call_driver  # noqa: E402
import trace_expect as te  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
SHARED = os.environ.get("TT_SHARED", "../shared")
TD = os.path.join(SHARED, "testdata")
C = te.Checker("test_call")


check = C.check


def argv_of(options):
    args = []
    for k, v in options.items():
        name = "--" + k.replace("_", "-")
        if v is True:
            args.append(name)
        elif v is False or v is None:
            continue
        elif isinstance(v, list):
            for x in v:
                args += [name, str(x)]
        else:
            args += [name, str(v)]
    return args


def compare(lib, cmd, inputs, options, json_flag=True, want_code=None):
    """tt_call's bytes and exit code == the program's"""
    rc, code, out, err = tt_call_driver.call(lib, cmd, inputs, options)
    argv = [TRACETOOL, cmd] + (["--format", "json"] if json_flag else []) + argv_of(options)
    if cmd == "memtimeline":
        argv += inputs + ["-"]
    else:
        argv += inputs
    p = subprocess.run(argv, capture_output=True)
    what = f"{cmd} {options} {[os.path.basename(i) for i in inputs]}"
    check(code == p.returncode, f"{what}: exit code {code} != the program's {p.returncode}"
          f" ({err!r} / {p.stderr.decode()[:200]!r})")
    if want_code is not None:
        check(code == want_code, f"{what}: exit code {code}, want {want_code}")
    if p.stdout:
        check(rc == 0 and out == p.stdout, f"{what}: output differs ({len(out or b'')} bytes"
              f" vs {len(p.stdout)}; {err!r})")
    else:
        check(rc < 0 and out is None and err, f"{what}: an error with a message ({rc}, {err!r})")
        # the message is the program's line (less its "tracetool: " or
        # "tracetool CMD: " and the usage hint)
        line = p.stderr.decode().strip().splitlines()[-1] if p.stderr else ""
        core = err.split(": ", 1)[1] if code == 2 else err
        check(core.split("'")[0] in line, f"{what}: message {err!r} not in {line!r}")


def main():
    trace = os.path.join(TD, "kineto", "tb_plugin_2021-06", "worker0.1623143089861.pt.trace.json.gz")
    dlrm = os.path.join(TD, "param", "dlrm_8rank", "kineto")
    ctl = os.path.join(TD, "hta", "trace_diff", "control", "control.json.gz")
    tst = os.path.join(TD, "hta", "trace_diff", "test", "test.json.gz")
    et = os.path.join(TD, "param", "resnet_pair", "resnet_et.json.gz")
    kin = os.path.join(TD, "param", "resnet_pair", "resnet_kineto.json.gz")
    need = [trace, dlrm, ctl, tst, et, kin]
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        print("SKIP: missing test data:", ", ".join(missing))
        return 77
    te.reexec_for_sanitizer()  # an ASan build's library needs its runtime first
    try:
        lib = tt_call_driver.load()
    except OSError as e:
        print("FAIL: cannot load libtracetool.so:", e)
        return 1
    before = set(os.listdir(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "t.db")
        p = subprocess.run([TRACETOOL, "ingest", "--quiet", db, trace], capture_output=True)
        check(p.returncode == 0, f"ingest: {p.stderr.decode()[:200]}")
        summ = os.path.join(tmp, "dlrm.summary")
        p = subprocess.run([TRACETOOL, "summarize", "-o", summ, dlrm], capture_output=True)
        have_sum = p.returncode == 0
        check(have_sum, f"summarize: {p.stderr.decode()[:200]}")
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{\"traceEvents\": [")
        nowhere = os.path.join(tmp, "missing.json")
        cases = [
            ("info", [trace], {}), ("info", [db], {"row_limit": 3}), ("info", [dlrm], {}),
            ("averages", [trace], {}),
            ("averages", [trace], {"group_by_shape": True, "sort_by": "cpu_time_total",
                                   "row_limit": 5}),
            ("averages", [trace], {"top_level_only": True, "no_gpu_annotations": True,
                                   "top": -1}),
            ("averages", [trace], {"name": "aten::", "sort_by": "self_cuda_time_total"}),
            ("averages", [trace], {"group_by_stack": 3}),
            ("averages", [trace], {"group_by_shape": False}),
            ("averages", [db], {"sort_by": "count"}),
            ("averages", [dlrm], {"rank": 3, "row_limit": 10}),
            ("kernels", [trace], {}), ("kernels", [trace], {"by": "stream"}),
            ("kernels", [trace], {"by": "runtime", "row_limit": 4}),
            ("kernels", [trace], {"by": "activity", "row_limit": 20}),
            ("kernels", [trace], {"only": "memory"}), ("kernels", [trace], {"sequences": 3}),
            ("kernels", [db], {"by": "op"}), ("kernels", [dlrm], {"trace": 2}),
            ("breakdown", [dlrm], {}), ("breakdown", [dlrm], {"by": "stream"}),
            ("breakdown", [dlrm], {"by": "step", "comm_pattern": ["nccl", "AllReduce"]}),
            ("breakdown", [trace], {"row_limit": 3}),
            ("collectives", [dlrm], {}), ("collectives", [dlrm], {"per_call": True,
                                                                 "arrival": "cpu"}),
            ("queue", [trace], {}), ("queue", [trace], {"max_queue": 2}),
            ("bandwidth", [trace], {}), ("bandwidth", [dlrm], {"rank": 0}),
            ("critical-path", [trace], {}),
            ("critical-path", [trace], {"data_load": ["DataLoader", "enumerate"]}),
            ("memtimeline", [trace], {}), ("memtimeline", [trace], {"no_categories": True}),
            ("memtimeline", [db], {}),
            ("crosscheck", [et, kin], {}), ("crosscheck", [et, kin], {"strict": True,
                                                                     "row_limit": 2}),
            ("diff", [ctl, tst], {}), ("diff", [ctl, tst], {"allow_env_mismatch": True}),
            ("diff", [ctl, tst], {"allow_env_mismatch": True, "no_stats": True,
                                  "gate": "+ops", "match": "name"}),
            ("diff", [tst, tst], {"fail_on_inconclusive": True}),
            ("diff", [ctl, ctl], {"threshold": 2.5}), ("diff", [tst], {"base": [ctl]}),
            # errors: usage 2, bad input 3, I/O 4
            ("averages", [trace], {"nope": 1}), ("averages", [trace], {"row_limit": "x"}),
            ("averages", [trace], {"sort_by": "bogus"}), ("kernels", [trace], {"by": "bogus"}),
            ("kernels", [trace], {"sequences": 3, "by": "name"}),
            ("breakdown", [dlrm], {"kernels": True}), ("diff", [ctl], {}),
            ("averages", [trace, trace], {}), ("queue", [trace], {"max_queue": 0}),
            ("averages", [bad], {}), ("kernels", [bad], {}), ("diff", [bad, ctl], {}),
            ("averages", [nowhere], {}), ("info", [nowhere], {}),
            ("crosscheck", [nowhere, kin], {}),
        ]
        if have_sum:
            cases += [("averages", [summ], {}), ("kernels", [summ], {}),
                      ("breakdown", [summ], {}), ("info", [summ], {}), ("queue", [summ], {})]
        for cmd, inputs, opts in cases:
            compare(lib, cmd, inputs, opts, json_flag=cmd != "memtimeline")
        # refused: the format, options that write files, wrong types, "-"
        for cmd, opts in [("averages", {"format": "json"}), ("averages", {"stacks": "x.txt"}),
                          ("breakdown", {"html": "x.html"}), ("diff", {"save_summary": "s"}),
                          ("critical-path", {"overlay": "o.json"}),
                          ("averages", {"row_limit": True}), ("averages", {"top_level_only": 1}),
                          ("averages", {"name": {"a": 1}}), ("nosuch", {})]:
            rc, code, out, err = tt_call_driver.call(lib, cmd, [trace], opts)
            check(rc < 0 and code == 2 and out is None and err and "\n" not in err,
                  f"{cmd} {opts} refused with exit code 2 ({rc}, {code}, {err!r})")
        rc, code, out, err = tt_call_driver.call(lib, "averages", ["-"], {})
        check(rc < 0 and code == 2, f"'-' refused ({rc}, {code}, {err!r})")
        rc, code, out, err = tt_call_driver.call(lib, "averages", [trace], "{not json")
        check(rc < 0 and code == 2, f"bad options JSON refused ({rc}, {code}, {err!r})")
        left = [n for n in os.listdir(tempfile.gettempdir())
                if n.startswith("tt_call.") and n not in before]
        check(not left, f"memtimeline's temporaries removed ({left})")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
