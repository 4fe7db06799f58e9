#!/usr/bin/env python3
"""Each command's options are one table (cli/opts.h) that drives parsing,
--help and the usage line: check that the three agree, and that the
README's Commands block lists the same options for every command.

For each command: the usage line (the first line of --help) names the same
options as the option list of --help; every option of the usage line is
accepted by the parser (given a value, it never fails as "unknown option");
a usage error (an unknown option, a missing operand) is one line on stderr,
exit 2, pointing to --help; a mistyped option or command gets a
suggestion; `help CMD` for a command that does not exist exits 2.
Python standard library only.
"""

import csv
import io
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("cli_options")
ROOT = os.path.join(HERE, "..", "..")
COMMANDS = ["ingest", "info", "averages", "kernels", "memtimeline", "crosscheck", "breakdown", "export",
            "queue", "bandwidth", "collectives", "critical-path", "summarize", "merge"]
OPT = re.compile(r"--([a-z][a-z-]*)")


def usage_error(args, cmd, label):
    p = te.run_tool(args)
    C.eq(p.returncode, 2, "%s: %s exits 2" % (cmd, label))
    lines = te.stderr_lines(p)
    C.check(len(lines) == 1 and lines[0].startswith("tracetool %s: " % cmd)
            and lines[0].endswith("(see 'tracetool %s --help')" % cmd),
            "%s: %s is one line pointing to --help" % (cmd, label), lines)
    C.eq(p.stdout, b"", "%s: %s prints nothing on stdout" % (cmd, label))
    return lines[0] if lines else ""


def readme_options():
    """{command: set of --options} from the README's Commands block"""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = text.split("## Commands", 1)[1].split("```", 2)[1]
    out, cur = {}, None
    for line in block.splitlines():
        m = re.match(r"tracetool ([\w-]+)", line)
        if m:
            cur = m.group(1)
        elif line.startswith("tracetool "):
            cur = None
        if cur:
            out.setdefault(cur, set()).update(OPT.findall(line))
    return out


def check_command(cmd, readme):
    usage_error([cmd, "--no-such-option"], cmd, "an unknown option")
    p = te.run_tool([cmd, "--help"])
    C.eq(p.returncode, 0, "%s --help exits 0" % cmd)
    helptext = p.stdout.decode()
    usage = helptext.split("\n", 1)[0]
    C.check(usage.startswith("usage: tracetool %s " % cmd), "%s --help: the usage line first" % cmd,
            usage)
    in_usage = set(OPT.findall(usage))
    in_help = set(OPT.findall(helptext.split("\n", 1)[1])) - {"help"}
    # --help text may name options of other commands in prose; every option
    # of the table is in both, and --help names no option the parser lacks
    C.eq(in_usage, {o for o in in_help if o in in_usage or
                    re.search(r"^\s+--%s\b" % o, helptext, re.M)}, "%s: --help lists the usage's options" % cmd)
    C.eq(readme.get(cmd, set()) - {"help"}, in_usage, "%s: README lists the same options" % cmd)
    for m in re.finditer(r"\[--([a-z-]+)( [^\]]+)?\]", usage):
        args = ["--" + m.group(1)] + (["x"] if m.group(2) else [])
        p = te.run_tool([cmd] + args)
        err = p.stderr.decode()
        C.check("unknown option" not in err, "%s: --%s is parsed" % (cmd, m.group(1)), err)
        # one letter dropped from a long option: the error names the option
        name = m.group(1)
        if len(name) >= 5:
            typo = "--" + name[:2] + name[3:]
            line = usage_error([cmd, typo, "x"], cmd, "a mistyped option")
            C.check("did you mean '--%s'?" % name in line, "%s %s: suggests --%s" % (cmd, typo, name),
                    line)
    usage_error([cmd], cmd, "no operands")
    p = te.run_tool(["help", cmd])
    C.eq(p.stdout.decode(), helptext, "help %s == %s --help" % (cmd, cmd))
    typo = cmd[:-1]
    for args in ([typo], ["help", typo]):
        p = te.run_tool(args)
        err = p.stderr.decode()
        C.check(p.returncode == 2 and "did you mean '%s'?" % cmd in err and err.count("\n") == 1,
                "tracetool %s: exit 2, suggests %s" % (" ".join(args), cmd), (p.returncode, err))


def check_version():
    p = te.run_tool(["version"])
    C.check(p.returncode == 0 and re.match(rb"tracetool \d+\.\d+\.\d+\n$", p.stdout),
            "tracetool version", p.stdout)
    C.eq(te.run_tool(["--version"]).stdout, p.stdout, "--version == version")


def check_formats():
    """one --format vocabulary: text is table everywhere; a typo is suggested"""
    trace = os.path.join(ROOT, "testdata", "kineto", "simple_add_trace.json.gz")
    et = os.path.join(ROOT, "testdata", "et", "simple_add_et.json.gz")
    # every command takes the four formats; CSV parses, markdown is a table
    for args in (["info", trace], ["averages", trace], ["kernels", trace],
                 ["crosscheck", et, trace]):
        for fmt in ("table", "csv", "json", "markdown"):
            p = te.run_tool([args[0], "--format", fmt] + args[1:])
            C.eq(p.returncode, 0, "%s --format %s: exit 0" % (args[0], fmt))
            out = p.stdout.decode()
            if fmt == "csv":
                rows = list(csv.DictReader(io.StringIO(out)))
                C.check(rows, "%s --format csv: rows" % args[0], out[:200])
            elif fmt == "markdown":
                C.check("|---" in out, "%s --format markdown: a table" % args[0], out[:200])
    # info CSV: the event count, counted here from the file
    rows = list(csv.DictReader(io.StringIO(te.run_tool(["info", "--format", "csv", trace])
                                           .stdout.decode())))
    C.eq(int(rows[0]["events"]), te.expect_file(trace).total, "info csv: events")
    doc = json.loads(te.run_tool(["crosscheck", "--format", "json", et, trace]).stdout)
    rows = list(csv.DictReader(io.StringIO(te.run_tool(["crosscheck", "--format", "csv", et,
                                                        trace]).stdout.decode())))
    C.eq(int(rows[0]["matched"]), doc["pairs"][0]["matched"], "crosscheck csv: matched")
    for cmd in ("info", "averages", "kernels"):
        a = te.run_tool([cmd, "--format", "text", trace])
        b = te.run_tool([cmd, "--format", "table", trace])
        C.check(a.returncode == b.returncode and a.stdout == b.stdout,
                "%s --format text == --format table" % cmd, (a.returncode, b.returncode))
        line = usage_error([cmd, "--format", "jsn", trace], cmd, "a mistyped format")
        C.check("did you mean 'json'?" in line, "%s --format jsn: suggests json" % cmd, line)


def main():
    readme = readme_options()
    for cmd in COMMANDS:
        C.section(cmd, check_command, cmd, readme)
    C.section("version", check_version)
    C.section("formats", check_formats)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
