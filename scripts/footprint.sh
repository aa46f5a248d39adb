# Sourced by scripts/test.sh: the disk footprint of a test run (docs/testing.md, "Disk").
#
#   footprint_free ROOT          prints the free space of ROOT's file system, and the peak a full
#                                run needs; fails, naming what to remove, when less is free.
#   footprint_tmp_snapshot       prints the size (KiB) of every entry of /tmp and /dev/shm.
#   footprint_tmp_check BEFORE   compares with such a snapshot; fails, naming what grew, when they
#                                grew by more than CRANK_TMP_GROWTH_MB (16) altogether.
#
# CRANK_RUN_PEAK_MB: the peak a full run from a clean clone adds to the disk (its four build
# trees, .tools/, the e2e node_modules and the run's temporary root), measured, plus a margin.
# ccache's growth is counted apart, up to its cap (scripts/ccache-env.sh). CRANK_MIN_FREE_MB, when
# set, replaces the whole requirement (0 turns the check off).
CRANK_RUN_PEAK_MB="${CRANK_RUN_PEAK_MB:-2560}"

# footprint_mb PATH...: the disk usage of the PATHs that exist, in MB (0 when none does).
footprint_mb() {
    local existing=() p
    for p in "$@"; do [[ -e "$p" ]] && existing+=("$p"); done
    if ((${#existing[@]} == 0)); then
        echo 0
        return
    fi
    du -scm "${existing[@]}" 2>/dev/null | tail -n 1 | cut -f1
}

# footprint_ccache_headroom_mb ROOT: how much ccache may still grow on ROOT's file system before
# its cap (0 when the cache lives on another file system or ccache is missing).
footprint_ccache_headroom_mb() {
    local root="$1" dir cap_kib size_kib
    command -v ccache >/dev/null || { echo 0; return; }
    dir="$(ccache -k cache_dir 2>/dev/null)" || { echo 0; return; }
    mkdir -p "$dir"
    [[ "$(stat -c %d "$dir")" == "$(stat -c %d "$root")" ]] || { echo 0; return; }
    cap_kib="$(ccache -k max_size 2>/dev/null | numfmt --from=auto 2>/dev/null)" || cap_kib=0
    cap_kib=$((cap_kib / 1024))
    size_kib="$(ccache --print-stats 2>/dev/null | awk '$1 == "cache_size_kibibyte" { print $2 }')"
    size_kib="${size_kib:-0}"
    if ((cap_kib > size_kib)); then echo $(((cap_kib - size_kib) / 1024)); else echo 0; fi
}

footprint_free() {
    local root="$1" free_mb need_mb trees_mb headroom_mb
    free_mb="$(df -Pm "$root" | awk 'NR == 2 { print $4 }')"
    trees_mb="$(footprint_mb "$root"/build "$root"/build-asan "$root"/build-tsan "$root"/build-fuzz \
        "$root/.tools" "$root/tests/e2e/node_modules")"
    headroom_mb="$(footprint_ccache_headroom_mb "$root")"
    if [[ -n "${CRANK_MIN_FREE_MB:-}" ]]; then
        need_mb="$CRANK_MIN_FREE_MB"
    else
        # What this clone already holds is reused, not written again.
        need_mb=$((CRANK_RUN_PEAK_MB > trees_mb ? CRANK_RUN_PEAK_MB - trees_mb : 0))
        need_mb=$((need_mb + headroom_mb))
    fi
    echo "test.sh: ${free_mb} MB free on $(df -P "$root" | awk 'NR == 2 { print $6 }');" \
        "this clone's trees and tools hold ${trees_mb} MB; a full run needs ${need_mb} MB more" \
        "(peak ${CRANK_RUN_PEAK_MB} MB, ccache may grow ${headroom_mb} MB)"
    if ((free_mb >= need_mb)); then
        return 0
    fi
    {
        echo "test.sh: refusing to start: ${free_mb} MB free, ${need_mb} MB needed. Remove some of:"
        local tree
        for tree in "$root"/build "$root"/build-asan "$root"/build-tsan "$root"/build-fuzz \
            "$root"/build-* "$root/.tools" "$root/tests/e2e/node_modules"; do
            [[ -e "$tree" ]] && printf '  %6s MB  %s (rm -rf)\n' "$(footprint_mb "$tree")" "$tree"
        done | sort -u -k3
        if command -v ccache >/dev/null; then
            printf '  %6s MB  ccache (ccache -C)\n' \
                "$(footprint_mb "$(ccache -k cache_dir 2>/dev/null)")"
        fi
        local leftover
        for leftover in /tmp/crank-*; do
            [[ -e "$leftover" ]] && printf '  %6s MB  %s (left by an earlier run)\n' \
                "$(footprint_mb "$leftover")" "$leftover"
        done
        echo "  (CRANK_MIN_FREE_MB=0 skips this check)"
    } >&2
    return 1
}

footprint_tmp_snapshot() {
    local dir
    for dir in /tmp /dev/shm; do
        [[ -d "$dir" ]] || continue
        find "$dir" -mindepth 1 -maxdepth 1 -print0 2>/dev/null | xargs -0 -r du -sk 2>/dev/null || true
    done | sort -k2
}

footprint_tmp_check() {
    local before="$1" grown_kib limit_mb="${CRANK_TMP_GROWTH_MB:-16}"
    # Every entry that is new or larger, with how much it grew (KiB), largest first.
    local report
    report="$(awk -F'\t' 'NR == FNR { was[$2] = $1; next }
        { d = $1 - ($2 in was ? was[$2] : 0); if (d > 0) printf "%d\t%s%s\n", d, $2, ($2 in was ? "" : " (new)") }' \
        <(printf '%s\n' "$before") <(footprint_tmp_snapshot) | sort -rn)"
    grown_kib="$(awk -F'\t' '{ s += $1 } END { print s + 0 }' <<<"$report")"
    if ((grown_kib > limit_mb * 1024)); then
        {
            echo "test.sh: /tmp and /dev/shm grew by $((grown_kib / 1024)) MB during the run (more than ${limit_mb} MB):"
            head -n 20 <<<"$report" | awk -F'\t' '{ printf "  %8d KiB  %s\n", $1, $2 }'
        } >&2
        return 1
    fi
    echo "test.sh: /tmp and /dev/shm grew by ${grown_kib} KiB during the run"
}
