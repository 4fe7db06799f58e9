#!/usr/bin/env python3
"""`kernels --sequences`, `breakdown --by annotation` and `critical-path` with
--name and --under stay linear, and their memory does not follow the trace.

HTA's nccl_parser_config trace repeated N and 4N times by
shared/tools/scale_trace.py; each command run on both files: the 4N run must
cost at most 8 times the N run (CPU time, best of 2) and at least 1.5 times
(a fixed cost per process keeps these inputs under 4x), and its peak RSS stay
under 64 MB (outside sanitizer builds): --under's ops are the matching ones
only, the annotations joined to their user_annotations and the ops a window
may come from wait in spills. Python standard library only.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_scaling_kseq  # noqa: E402  N vs 4N copies of nccl_parser_config, the bounds

RUNS = (["kernels", "--sequences", "3", "--name", "elementwise|nccl",
         "--under", "ProfilerStep#.*"],
        ["kernels", "--sequences", "2", "--under-op", "aten::", "--under", "aten::conv.*"],
        ["breakdown", "--by", "annotation", "--under", "ProfilerStep#.*", "--name", "nccl"],
        ["breakdown", "--by", "annotation", "--kernels", "--under", "ProfilerStep#.*"],
        ["critical-path", "--under", "aten::.*", "--instance", "5-9", "--name", "nccl"])


if __name__ == "__main__":
    sys.exit(test_scaling_kseq.main(RUNS, "test_scaling_filtered_kseq"))
