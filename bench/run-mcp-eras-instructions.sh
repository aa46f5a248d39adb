#!/usr/bin/env bash
# The same two calls as bench/run-mcp-eras.sh (the no-op tool as a stateless 2026-07-28 request
# and on a 2025-11-25 session), counted in instructions instead of time: crankd runs under
# valgrind's callgrind, which counts every instruction crankd executes in user space. So the
# figure does not move with the machine's noise, which on this shared 2-core machine moves the
# requests/s ratio by several per cent between runs. The kernel's share (the sockets) is not
# counted: it is about the same for both eras, since each call makes the same system calls.
# Figures: instructions per call of each era, their ratio (2025 : 2026, goal >= 1.0: the 2026
# call no dearer), and the functions whose cost differs most between the eras (inclusive,
# per call).
#   bench/run-mcp-eras-instructions.sh [SECONDS_PER_ERA]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=${1:-5}
command -v wrk >/dev/null || "$root/scripts/install-deps.sh" --bench >/dev/null  # wrk
command -v valgrind >/dev/null || "$root/scripts/install-deps.sh" --bench >/dev/null  # valgrind

if [[ -z "${CRANK_MCP_URL:-}" ]]; then  # start crankd under callgrind, then come back here
    "$root/scripts/build.sh" --target crankd-test-tools >/dev/null
    out="$(mktemp -d /tmp/crank-callgrind.XXXXXX)"
    wrapper="$out/crankd-under-callgrind"
    # Instrumented only while an era's load runs: start-up and the warm-up are not counted.
    printf '#!/bin/sh\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=%s/callgrind.out "%s" "$@"\n' \
        "$out" "$root/build/bin/crankd-test-tools" >"$wrapper"
    chmod +x "$wrapper"
    export CALLGRIND_OUT="$out"
    export CRANK_EXTRA_CONFIG='"server": {"threads": 8, "queue": 64}'
    status=0
    "$root/tests/e2e/with-crankd.sh" "$wrapper" -- "$0" "$@" || status=$?
    rm -rf "$out"
    exit "$status"
fi
: "${CRANKD_PID:?run me through with-crankd.sh}"
url="${CRANK_MCP_URL%/mcp}"
# shellcheck source=bench/lib/mcp-session.sh
source "$root/bench/lib/mcp-session.sh"
session="$(open_mcp_session "$url/mcp")"
[[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }
script_of() { [[ $1 == 2026 ]] && echo "$root/bench/tools-call-2026.lua" || echo "$root/bench/tools-call.lua"; }

declare -A dump calls
for era in 2026 2025; do
    SESSION="$session" wrk -t1 -c1 -d1s -s "$(script_of $era)" "$url/mcp" >/dev/null  # warm-up
    callgrind_control -z "$CRANKD_PID" >/dev/null 2>&1
    callgrind_control -i on "$CRANKD_PID" >/dev/null 2>&1
    out="$(SESSION="$session" wrk -t1 -c2 -d"${seconds}s" -s "$(script_of $era)" "$url/mcp")"
    callgrind_control -i off "$CRANKD_PID" >/dev/null 2>&1
    callgrind_control -d "era$era" "$CRANKD_PID" >/dev/null 2>&1
    # The calls wrk saw answered: at most its 2 connections' calls straddle the switches.
    calls[$era]="$(awk '/requests in/ {print $1}' <<<"$out")"
    dump[$era]="$(ls -t "$CALLGRIND_OUT"/callgrind.out.* | head -1)"
done
python3 - "${dump[2026]}" "${calls[2026]}" "${dump[2025]}" "${calls[2025]}" <<'PY'
import re, subprocess, sys

def read(path, calls):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100",
                          path], capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"^([\d,]+) .*PROGRAM TOTALS", out, re.M).group(1).replace(",", ""))
    functions = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S+?):(.*)$", line)
        if not m or not m.group(3).startswith("crank::"):
            continue
        name = re.sub(r" \[[^\]]*\]$", "", m.group(3))
        # A function inlined in several files is listed once per file: its own file's line is
        # the largest, and the one kept.
        functions[name] = max(functions.get(name, 0), int(m.group(1).replace(",", "")))
    return total, int(calls), functions

modern, legacy = read(sys.argv[1], sys.argv[2]), read(sys.argv[3], sys.argv[4])
if modern[1] == 0 or legacy[1] == 0:
    sys.exit("bench: no call was counted")
per = lambda era, n: n / era[1]
print(f"{'era':22} {'calls':>8} {'instructions per call':>22}")
print(f"{'2026-07-28 stateless':22} {modern[1]:8d} {per(modern, modern[0]):22.0f}")
print(f"{'2025-11-25 session':22} {legacy[1]:8d} {per(legacy, legacy[0]):22.0f}")
print(f"2025 : 2026 instructions per call = {per(legacy, legacy[0]) / per(modern, modern[0]):.3f}"
      " (goal >= 1.0: the 2026 call no dearer)")
print("largest differences, inclusive instructions per call (2026 - 2025, 2026, 2025):")
names = set(modern[2]) | set(legacy[2])
diff = lambda n: per(modern, modern[2].get(n, 0)) - per(legacy, legacy[2].get(n, 0))
for name in sorted(names, key=lambda n: -abs(diff(n)))[:15]:
    short = re.sub(r"\(.*", "", name)
    print(f"  {diff(name):+8.0f} {per(modern, modern[2].get(name, 0)):8.0f}"
          f" {per(legacy, legacy[2].get(name, 0)):8.0f}  {short}")
PY
