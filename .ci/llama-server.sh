#!/usr/bin/env bash
# Builds llama.cpp's llama-server (CPU only) from llama.cpp's source at the commit the tests are pinned to, and prints
# the binary's path on stdout: ./run-tests runs it when no llama-server is given (READYGATE_LLAMA_SERVER) or on the PATH.
# The source, first found of:
#   1. LLAMA_CPP_TARBALL, a source tarball (.ci/run names the one this project's machines keep beside the checkout);
#   2. ~/.cache/readygate/llama.cpp-c392e509.tar.gz (READYGATE_CACHE for another root): where a machine without a
#      network keeps the tarball of the pinned commit;
#   3. llama.cpp's public repository (LLAMA_CPP_REPOSITORY, default https://github.com/ggml-org/llama.cpp), fetched with
#      git at the pinned commit, whose id git verifies against the content it fetched.
# The build is cached under ~/.cache/readygate/llama-server/<tarball sha256, or commit-<id>>/, so it runs once per
# machine: bin/llama-server (statically linked) and the marker `complete`, written last.
# Everything else (progress, compiler output) goes to stderr. The tests themselves take the binary from
# -Dreadygate-test.llama-server, which ./run-tests passes (README, "The real-engine suite").
set -euo pipefail
cd "$(dirname "$0")/.."

# The llama.cpp commit the real-engine suite is tested at (README, "The real-engine suite"); LLAMA_CPP_COMMIT is for
# the tests of this script.
pinned="${LLAMA_CPP_COMMIT:-c392e5094deaf2d1a7c18683214f007fad3fe42b}"
repository="${LLAMA_CPP_REPOSITORY:-https://github.com/ggml-org/llama.cpp}"
cache_root="${READYGATE_CACHE:-$HOME/.cache/readygate}"
kept_tarball="$cache_root/llama.cpp-${pinned:0:8}.tar.gz"

tarball="${LLAMA_CPP_TARBALL:-}"
if [ -n "$tarball" ] && [ ! -f "$tarball" ]; then
  echo "llama-server: LLAMA_CPP_TARBALL=$tarball is no file: point it at llama.cpp's source tarball, or unset it" >&2
  exit 1
fi
[ -n "$tarball" ] || [ ! -f "$kept_tarball" ] || tarball="$kept_tarball"
if [ -n "$tarball" ]; then
  key="$(sha256sum "$tarball" | cut -d' ' -f1)"
else
  key="commit-$pinned"
fi
cache="$cache_root/llama-server/$key"
binary="$cache/bin/llama-server"

# A finished build leaves a marker written last; a half-written cache (an interrupted build) or a binary that does not
# run here is built again.
usable() { [ -f "$cache/complete" ] && [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; }
if usable; then
  echo "$binary"
  exit 0
fi

missing=()
[ -n "$tarball" ] || command -v git >/dev/null || missing+=(git)
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
if [ -n "$tarball" ]; then
  echo "llama-server: building from $tarball (sha256 $key) in $work; a few minutes" >&2
  tar -xzf "$tarball" -C "$work"
else
  echo "llama-server: no source tarball (LLAMA_CPP_TARBALL unset, none at $kept_tarball);" >&2
  echo "  fetching llama.cpp at commit $pinned from $repository" >&2
  git init -q "$work/llama.cpp" >&2
  if ! timeout 900 git -C "$work/llama.cpp" fetch -q --depth 1 "$repository" "$pinned" >&2; then
    echo "llama-server: could not fetch llama.cpp's commit $pinned from $repository (above). Without a network:" >&2
    echo "  on a machine that has one, download $repository/archive/$pinned.tar.gz" >&2
    echo "  and put it at $kept_tarball (or anywhere, with LLAMA_CPP_TARBALL=<its path>)," >&2
    echo "  or build llama-server yourself (README, \"The real-engine suite\") and set READYGATE_LLAMA_SERVER=<its path>" >&2
    exit 1
  fi
  git -C "$work/llama.cpp" checkout -q FETCH_HEAD >&2
  fetched="$(git -C "$work/llama.cpp" rev-parse HEAD)"
  if [ "$fetched" != "$pinned" ]; then
    echo "llama-server: $repository gave commit $fetched for $pinned: refusing to build it" >&2
    exit 1
  fi
  echo "llama-server: building llama.cpp $pinned (verified by git) in $work; a few minutes" >&2
fi
src="$work"
[ -n "$tarball" ] || src="$work/llama.cpp"
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
