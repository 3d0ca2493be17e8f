#!/usr/bin/env bash
# Builds llama.cpp's llama-server (CPU only) from llama.cpp's source tarball and prints the binary's path on stdout:
# ./run-tests runs it when no llama-server is given (READYGATE_LLAMA_SERVER) or on the PATH. The tarball is
# LLAMA_CPP_TARBALL (.ci/run names the one this project's machines keep beside the checkout). The build is cached under ~/.cache/readygate/llama-server/<tarball sha256>/ (override the
# root with READYGATE_CACHE), so it runs once per machine: bin/llama-server (statically linked) and the marker
# `complete`, written last.
# Everything else (progress, compiler output) goes to stderr. The tests themselves take the binary from
# -Dreadygate-test.llama-server, which ./run-tests passes (README, "The real-engine suite").
set -euo pipefail
cd "$(dirname "$0")/.."

tarball="${LLAMA_CPP_TARBALL:-}"
if [ ! -f "$tarball" ]; then
  echo "llama-server: no llama.cpp source tarball (LLAMA_CPP_TARBALL=${tarball:-unset}): set it to one (llama.cpp's source," >&2
  echo "  e.g. https://github.com/ggml-org/llama.cpp/archive/c392e509.tar.gz), or READYGATE_LLAMA_SERVER to a built llama-server" >&2
  exit 1
fi
sha="$(sha256sum "$tarball" | cut -d' ' -f1)"
cache="${READYGATE_CACHE:-$HOME/.cache/readygate}/llama-server/$sha"
binary="$cache/bin/llama-server"

# A finished build leaves a marker written last; a half-written cache (an interrupted build) or a binary that does not
# run here is built again.
usable() { [ -f "$cache/complete" ] && [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; }
if usable; then
  echo "$binary"
  exit 0
fi

missing=()
command -v cmake >/dev/null || missing+=(cmake)
{ command -v g++ >/dev/null && command -v make >/dev/null; } || missing+=(build-essential)
if [ ${#missing[@]} -gt 0 ]; then
  echo "llama-server: installing ${missing[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# One build at a time per cache entry (two CI jobs on one machine share it).
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if usable; then
  echo "$binary"
  exit 0
fi
rm -f "$cache/complete"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "llama-server: building from $tarball (sha256 $sha) in $work; a few minutes" >&2
tar -xzf "$tarball" -C "$work"
src="$work"
# The tarball may hold the sources at its top level or in one folder.
if [ ! -f "$src/CMakeLists.txt" ]; then
  src="$(dirname "$(find "$work" -maxdepth 2 -name CMakeLists.txt | head -1)")"
fi
# Static libraries: one self-contained binary that runs from the cache (a shared build's RUNPATH names the build folder).
cmake -S "$src" -B "$work/build" -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$work/build" --target llama-server -j"$(nproc)" >&2

rm -rf "$cache/bin"
mkdir -p "$cache/bin"
cp "$work/build/bin/llama-server" "$cache/bin/"
"$binary" --version >&2
touch "$cache/complete"
echo "$binary"
