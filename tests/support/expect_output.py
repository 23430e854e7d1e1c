#!/usr/bin/env python3
"""Runs a command and passes only when it exits 0 and its output matches a regular expression.

CTest's PASS_REGULAR_EXPRESSION replaces the exit-code check instead of adding to it, so a
multi-process run in which one process printed the expected line and another failed would pass.
Usage: expect_output.py REGEX -- COMMAND [ARG...]   (the regex is searched with '.' matching
newlines, as CTest's does). The command's output is passed through, and its exit code 77 (a
skip, with its reason printed) too.
"""
import re
import subprocess
import sys

SKIP = 77  # CTest's SKIP_RETURN_CODE in this project


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: expect_output.py REGEX -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    pattern, command = sys.argv[1], sys.argv[3:]
    # The command runs under CTest's own timeout; no second deadline is needed here.
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    output = done.stdout.decode(errors="replace")
    sys.stdout.write(output)
    if done.returncode == SKIP:
        return SKIP  # the command could not run here and said why
    if done.returncode != 0:
        print(f"expect_output: the command exited with {done.returncode}", file=sys.stderr)
        return 1
    if not re.search(pattern, output, re.S):
        print(f"expect_output: no output matched {pattern!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
