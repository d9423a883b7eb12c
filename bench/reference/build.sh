#!/bin/bash
# Builds the C++ reference converter, `vw --binary_parser --binary_to_json`
# (the external_parser of VowpalWabbit/reinforcement_learning), Release, for
# `cargo xtask bench --reference DIR/build/vw`. Not part of CI.
#
#   bash bench/reference/build.sh [DIR]      (default DIR: target/reference)
#
# Sources: each repository at the commit below, from GitHub, or from bare
# mirrors when MIRROR names a directory holding OWNER+NAME/repo (as the
# development machine's offline copies do). About 10 minutes on 2 cores.
# Debian 12 packages: flatbuffers 2.0.8, Eigen 3.4, Boost 1.74 headers.
# The binary it built there wrote the reference's expected DSJSON byte for
# byte for all 49 logs of ../shared/corpus/expected/MANIFEST.tsv, and the
# same bytes as `fb convert --compat reference` for the bench's three logs.
set -euo pipefail
DIR=$(realpath -m "${1:-target/reference}")
MIRROR=${MIRROR:-}

# OWNER/NAME COMMIT DEST [paths to leave out: large files the mirrors lack]
get() {
  local repo=$1 commit=$2 dest=$3; shift 3
  mkdir -p "$dest"
  local bare="$MIRROR/${repo/\//+}/repo"
  if [ -n "$MIRROR" ] && [ -d "$bare" ]; then
    local idx; idx=$(mktemp -p "$DIR"); rm -f "$idx"
    GIT_INDEX_FILE=$idx git --git-dir="$bare" read-tree "$commit"
    [ $# -gt 0 ] && GIT_INDEX_FILE=$idx git --git-dir="$bare" update-index --force-remove -- "$@"
    GIT_INDEX_FILE=$idx git --git-dir="$bare" checkout-index -a --prefix="$dest/"
    rm -f "$idx"
  else
    git -C "$dest" init -q
    git -C "$dest" fetch -q --depth 1 "https://github.com/$repo.git" "$commit"
    git -C "$dest" checkout -q FETCH_HEAD
  fi
}

if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    libflatbuffers-dev flatbuffers-compiler libeigen3-dev libboost-dev ninja-build \
    zlib1g-dev cmake g++ >/dev/null
fi

mkdir -p "$DIR"
SRC=$DIR/src/reinforcement_learning
rm -rf "$DIR/src"
get VowpalWabbit/reinforcement_learning a04ede6d5573561cca38c223cdf899179f48ee3a "$SRC" \
  benchmarks/models/cb_explore_adf_large.m nuget/nuget.exe
# The submodules external_parser needs, at the commits the repository pins.
get VowpalWabbit/vowpal_wabbit 4256bf10d7faa25e30fdb489abc9340ab366d53f "$SRC/ext_libs/vowpal_wabbit" \
  logo_assets/vowpal-wabbits-logomark.eps test/train-sets/ner.test.gz vowpalwabbit/.nuget/NuGet.exe
get facebook/zstd b706286adbba780006a47ef92df0ad7a785666b6 "$SRC/ext_libs/zstd"
V=$SRC/ext_libs/vowpal_wabbit/ext_libs
get fmtlib/fmt a33701196adfad74917046096bf5a2aa0ab0bb50 "$V/fmt"
get gabime/spdlog ad0e89cbfb4d0c1ce4d097e134eb7be67baebb36 "$V/spdlog"
get Tencent/rapidjson f54b0e47a08782a6131cc3d60f94d038fa6e0a51 "$V/rapidjson"

# Release is -O3 -DNDEBUG; VW adds its own (-mavx2 -fomit-frame-pointer ...).
cmake -S "$SRC/external_parser" -B "$DIR/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_BINARY_PARSER_TESTS=OFF -DBUILD_TESTING=OFF \
  -DVW_BUILD_VW_C_WRAPPER=OFF -DWARNINGS=OFF \
  -DVW_EIGEN_SYS_DEP=ON -DVW_BOOST_MATH_SYS_DEP=ON >/dev/null
nice -n 19 cmake --build "$DIR/build" --target rl_binary_parser_bin -j2
echo "built: $DIR/build/vw"
echo "use:   vw -d LOG.fb --binary_parser --binary_to_json --cb_explore_adf --quiet  (writes LOG.dsjson beside LOG.fb)"
