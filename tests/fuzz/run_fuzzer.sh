#!/usr/bin/env bash
# Runs one libFuzzer target for ctest's fuzz.<name> (tests/fuzz/CMakeLists.txt):
#   run_fuzzer.sh TARGET OUT NAME CORPUS REGRESSIONS -- LIBFUZZER_FLAGS...
# New inputs go to OUT/corpus/NAME (the first corpus directory, which libFuzzer writes to), crashes
# and hangs to OUT/artifacts/NAME/, the log to OUT/logs/NAME.log; the in-tree CORPUS and
# REGRESSIONS are only read. Exits with libFuzzer's status: non-zero when it found something.
set -euo pipefail
target="$1" out="$2" name="$3" corpus="$4" regressions="$5"
shift 5
[[ "${1:-}" == "--" ]] && shift
scratch="$out/corpus/$name"
artifacts="$out/artifacts/$name"
mkdir -p "$scratch" "$artifacts" "$out/logs"
dirs=("$scratch" "$corpus")
if [[ -d "$regressions" ]]; then
    dirs+=("$regressions")
fi
log="$out/logs/$name.log"
status=0
"$target" "$@" "-artifact_prefix=$artifacts/" "${dirs[@]}" >"$log" 2>&1 || status=$?
# The end of the log in ctest's output (the whole of it when something was found).
if ((status != 0)); then
    cat "$log"
    echo "fuzz.$name: libFuzzer exited with $status; inputs in $artifacts/" >&2
else
    tail -n 25 "$log"
fi
exit "$status"
