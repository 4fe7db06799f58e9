#!/usr/bin/env python3
"""Run one Criterion test binary for ctest, so that a skipped test shows as
skipped, never as passed (tests/CMakeLists.txt: SKIP_RETURN_CODE 77).

    criterion_ctest.py BINARY [CRITERION OPTIONS...]

Criterion counts cr_skip_test() (and .disabled tests) as a success: the binary
exits 0 and ctest would say Passed although the test did not run (the unit
tests skip themselves when the team's shared data is missing:
tests/unit/shared_data.h). This wrapper runs BINARY with its options plus
--tap=FILE, lets its own output through unchanged, then reads the TAP report
(Criterion 2.4's JSON report does not escape quotes or newlines in messages,
so it is not used) and exits with

  BINARY's status  when it failed (a status of 77 becomes 1): failures win;
  1                when it exited 0 but the report says a test failed, or the
                   report is missing or incomplete (fewer results than its
                   plan: a crash of the runner), or it holds no test at all;
  77               when no test failed and at least one was skipped;
  0                when every test ran and passed.

The choice: a binary where only SOME tests were skipped is skipped as a whole
(not only when all were). ctest has no "partly passed", and Passed should mean
that everything the entry holds ran and passed, as for the Python CLI tests
(tests/tools/trace_expect.py, Checker.finish). The tests that did run still
count: a failure among them fails the entry. Every skipped test is listed
with its reason, and the last line says how many passed and were skipped.

Python standard library only.
"""

import os
import re
import subprocess
import sys
import tempfile

SKIP_EXIT = 77
RESULT = re.compile(r"^(ok|not ok) - (\S+)(?:\s+# SKIP ?(.*))?")
PLAN = re.compile(r"^1\.\.(\d+)\s*$")


def parse_tap(text):
    """(plan or None, [(ok, name, skip reason or None)]): a skip reason runs on
    to the next TAP line (Criterion writes a message's newlines as they are)"""
    plan, results = None, []
    reason_of = None
    for line in text.splitlines():
        m = RESULT.match(line)
        if m:
            reason = m.group(3)
            results.append([m.group(1) == "ok", m.group(2),
                            reason.strip() if reason is not None else None])
            reason_of = results[-1] if reason is not None else None
            continue
        p = PLAN.match(line)
        if p and plan is None:
            plan = int(p.group(1))
            reason_of = None
        elif line.startswith(("#", "  ---", "TAP version")):
            reason_of = None
        elif reason_of is not None:
            reason_of[2] += " / " + line.strip()
    return plan, [tuple(r) for r in results]


def main(argv):
    if len(argv) < 2:
        print("usage: criterion_ctest.py BINARY [CRITERION OPTIONS...]", file=sys.stderr)
        return 2
    binary, opts = argv[1], argv[2:]
    name = os.path.basename(binary)
    with tempfile.TemporaryDirectory(prefix="tt_crit_") as d:
        tap = os.path.join(d, "report.tap")
        sys.stdout.flush()
        try:
            rc = subprocess.call([binary] + opts + ["--tap=" + tap])
        except OSError as e:
            print("%s: cannot run: %s" % (name, e))
            return 1
        try:
            with open(tap, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = None
    if text is None:
        plan, results = None, []
    else:
        plan, results = parse_tap(text)
    failed = [n for ok, n, _ in results if not ok]
    skipped = [(n, why) for ok, n, why in results if ok and why is not None]
    passed = len(results) - len(failed) - len(skipped)
    for n, why in skipped:
        print("SKIP %s: %s" % (n, why or "skipped"))
    summary = "%s: %d passed, %d failed, %d skipped" % (name, passed, len(failed), len(skipped))
    if rc != 0:
        how = "killed by signal %d" % -rc if rc < 0 else "exit status %d" % rc
        print("%s (%s)" % (summary, how))
        return 1 if rc < 0 or rc == SKIP_EXIT else rc
    if text is None or plan is None or len(results) != plan:
        print("%s: the TAP report is %s (plan %s, %d results): counted as failed"
              % (summary, "missing" if text is None else "incomplete", plan, len(results)))
        return 1
    if failed:
        print("%s (exit 0, but the report lists failures: %s)" % (summary, ", ".join(failed[:5])))
        return 1
    if not results:
        print("%s: no test ran: counted as failed" % summary)
        return 1
    if skipped:
        print("%s: shown as skipped (not everything ran)" % summary)
        return SKIP_EXIT
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
