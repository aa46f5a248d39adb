# Sourced (not run) by every script that compiles: scripts/build.sh, scripts/sanitizers.sh,
# scripts/fuzz.sh. The one place for ccache's settings, so that the four trees and every clone of
# the project share one cache under one cap.
#
#   CCACHE_BASEDIR, CCACHE_NOHASHDIR  hash paths relative to the checkout, so that a clean clone
#                                     elsewhere (CI's) hits what the work tree compiled.
#   CCACHE_MAXSIZE                    the cap. One full run of scripts/test.sh from a clean clone
#                                     (build/, build-asan/, build-tsan/, build-fuzz/) stores
#                                     about 210 MB of compressed objects (measured: docs/testing.md,
#                                     "Disk"); 1 GB keeps several commits' worth, and trees
#                                     configured by hand, before the oldest entries go.
# Each may be set in the environment to override it.
crank_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$crank_root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-1G}"
