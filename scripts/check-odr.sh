#!/usr/bin/env bash
# Finds one-definition-rule clashes the linker keeps quiet about: two different inline or template
# definitions of one name in namespace graphtier (two classes `Scratch<T>` in two private headers,
# say). The linker keeps one of them for every caller; the other half of the code then runs code
# written for another class. In a Debug (-O0) build every such function is emitted as a weak symbol
# of its own, so two definitions show as one symbol with two different code sizes (two that
# happen to compile to the same size escape it).
#
# Usage: scripts/check-odr.sh BUILD_DIR   (a Debug build, e.g. build/cuda-debug)
# Reads the objects of the graphtier libraries only: they are all compiled alike (position
# independent), so one definition always has one size there. Exits 1 and names the symbols and the
# objects when a clash is found.
set -euo pipefail
build=${1:?usage: check-odr.sh BUILD_DIR}
objects=$(find "$build/CMakeFiles" -path '*/CMakeFiles/graphtier_*.dir/*' -name '*.o' | sort)
[ -n "$objects" ] || { echo "check-odr: no library objects under $build/CMakeFiles" >&2; exit 2; }

# "symbol size object" for every weak (W, V) symbol of namespace graphtier.
# shellcheck disable=SC2086
table=$(nm -S --defined-only -A $objects 2>/dev/null |
  awk 'NF == 4 && ($3 == "W" || $3 == "V") && $4 ~ /^_ZN(K)?9graphtier/ {
         sub(/:[0-9a-f]+$/, "", $1); print $4, $2, $1 }' | sort -u)
clashes=$(awk '{ if (!(($1, $2) in seen)) { seen[$1, $2] = 1; sizes[$1]++ } }
               END { for (s in sizes) if (sizes[s] > 1) print s }' <<<"$table" | sort)
if [ -n "$clashes" ]; then
  echo "check-odr: one name, several definitions (the linker keeps one of them for every caller):" >&2
  while read -r sym; do
    echo "  $(c++filt "$sym")  [$sym]" >&2
    awk -v s="$sym" '$1 == s { sub(/^0+/, "", $2); printf "    0x%s bytes in %s\n", $2, $3 }' <<<"$table" >&2
  done <<<"$clashes"
  exit 1
fi
# A file compiled for one instruction set (src/sample/cpu/lanes_avx*.cpp, with -mavx512f or -mavx2)
# must define no weak symbol at all: the linker could keep its copy, wider instructions inside, for
# callers on a CPU without them.
wide=$(grep '/lanes_avx[^/]*\.o$' <<<"$objects" || true)
if [ -n "$wide" ]; then
  # shellcheck disable=SC2086
  weak=$(nm -C --defined-only -A $wide 2>/dev/null | awk '$(NF - 1) == "W" || $(NF - 1) == "V"' || true)
  if [ -n "$weak" ]; then
    echo "check-odr: weak symbols in a file compiled for one instruction set:" >&2
    echo "$weak" >&2
    exit 1
  fi
fi
echo "check-odr: $(grep -c . <<<"$table" || true) weak symbols of namespace graphtier in $(wc -w <<<"$objects") objects, each with one definition"
