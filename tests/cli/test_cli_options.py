#!/usr/bin/env python3
"""Each command's options are one table (cli/opts.h) that drives parsing,
--help and the usage line: check that the three agree, and that the
README's Commands block lists the same options for every command.

For each command: the usage line printed with a usage error names the same
options as --help; every option of the usage line is accepted by the parser
(given a value, it never fails as "unknown or incomplete option"); an
unknown option and a missing operand exit 2 with the usage line.
Python standard library only.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("cli_options")
ROOT = os.path.join(HERE, "..", "..")
COMMANDS = ["ingest", "info", "averages", "kernels", "memtimeline", "crosscheck"]
OPT = re.compile(r"--([a-z][a-z-]*)")


def usage_line(cmd):
    p = te.run_tool([cmd, "--no-such-option"])
    C.eq(p.returncode, 2, "%s: unknown option exits 2" % cmd)
    lines = te.stderr_lines(p)
    C.check(len(lines) == 2 and lines[1].startswith("usage: tracetool %s " % cmd),
            "%s: one error line and the usage line" % cmd, lines)
    return lines[1] if len(lines) > 1 else ""


def readme_options():
    """{command: set of --options} from the README's Commands block"""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = text.split("## Commands", 1)[1].split("```", 2)[1]
    out, cur = {}, None
    for line in block.splitlines():
        m = re.match(r"tracetool (\w+)", line)
        if m:
            cur = m.group(1)
        elif line.startswith("tracetool "):
            cur = None
        if cur:
            out.setdefault(cur, set()).update(OPT.findall(line))
    return out


def check_command(cmd, readme):
    usage = usage_line(cmd)
    in_usage = set(OPT.findall(usage))
    p = te.run_tool([cmd, "--help"])
    C.eq(p.returncode, 0, "%s --help exits 0" % cmd)
    helptext = p.stdout.decode()
    in_help = set(OPT.findall(helptext)) - {"help"}
    C.check(helptext.startswith("usage: tracetool %s [options]" % cmd), "%s --help usage" % cmd)
    # --help text may name options of other commands in prose; every option
    # of the table is in both, and --help names no option the parser lacks
    C.eq(in_usage, {o for o in in_help if o in in_usage or
                    re.search(r"^\s+--%s\b" % o, helptext, re.M)}, "%s: --help lists the usage's options" % cmd)
    C.eq(readme.get(cmd, set()) - {"help"}, in_usage, "%s: README lists the same options" % cmd)
    for m in re.finditer(r"\[--([a-z-]+)( [^\]]+)?\]", usage):
        args = ["--" + m.group(1)] + (["x"] if m.group(2) else [])
        p = te.run_tool([cmd] + args)
        err = p.stderr.decode()
        C.check("unknown or incomplete option" not in err,
                "%s: --%s is parsed" % (cmd, m.group(1)), err)
    p = te.run_tool([cmd])
    C.eq(p.returncode, 2, "%s without operands exits 2" % cmd)
    C.check(te.stderr_lines(p)[-1:] == [usage], "%s: missing operand shows the usage line" % cmd)
    p = te.run_tool(["help", cmd])
    C.eq(p.stdout.decode(), helptext, "help %s == %s --help" % (cmd, cmd))


def main():
    readme = readme_options()
    for cmd in COMMANDS:
        C.section(cmd, check_command, cmd, readme)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
