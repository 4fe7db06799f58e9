#!/usr/bin/env python3
"""The top-level keys of a trace are decoded in one place
(formats/kineto.c), so `info FILE` and `info DB` agree on them: rank and
world size from distributedInfo's own keys (not a nested "rank" of a
process-group list, and with spaces before the colon), schemaVersion,
baseTimeNanoseconds and pid. Expected values are the ones written into the
trace here. Python standard library only.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("info_meta")

TRACE = ('{"schemaVersion": "1.0.2", "distributedInfo": {"backend": "nccl", '
         '"pg_config": [{"pg_name": "0", "rank": 9, "world_size": 99}], '
         '"rank" : 3, "world_size" : 8}, "baseTimeNanoseconds": 1700000000000000000, '
         '"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 5, '
         '"tid": 5, "ts": 1, "dur": 2}], "pid": 5}')

WANT = {"rank": 3, "world_size": 8, "schema_version": "1.0.2",
        "base_time_ns": 1700000000000000000, "pid": 5}


def info(path):
    p = te.run_tool(["info", "--format", "json", path])
    C.eq(p.returncode, 0, "info %s exit code" % os.path.basename(path))
    doc = json.loads(p.stdout.decode())
    return doc["traces"][0]


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        with open(path, "w") as f:
            f.write(TRACE)
        db = os.path.join(d, "t.db")
        p = te.run_tool(["ingest", "-q", db, path])
        C.eq(p.returncode, 0, "ingest exit code")
        got_file, got_db = info(path), info(db)
        for k, v in WANT.items():
            C.eq(got_file.get(k), v, "info FILE %s" % k)
            C.eq(got_db.get(k), v, "info DB %s" % k)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
