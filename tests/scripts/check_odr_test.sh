#!/usr/bin/env bash
# check-odr.sh must find two different definitions of one template in namespace graphtier (the
# shape of the two Scratch<T> classes that once lived in two private CUDA headers), and must pass
# the same two objects once the definitions agree.
set -euo pipefail
script="$1/scripts/check-odr.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objects="$work/build/CMakeFiles/graphtier_sample.dir"
mkdir -p "$objects"

# Scratch<T> as one header has it (the destructor frees) and as the other has it (it also counts).
write() {  # file, destructor body
  cat >"$work/$1.cpp" <<CPP
#include <cstdlib>
namespace graphtier::sample::cuda {
template <typename T> struct Scratch {
  T* p = static_cast<T*>(std::malloc(sizeof(T)));
  int n = 1;
  ~Scratch() { $2 }
};
}  // namespace graphtier::sample::cuda
int use_$1() { graphtier::sample::cuda::Scratch<long> s; return s.n; }
CPP
  g++ -std=c++20 -O0 -fPIC -c "$work/$1.cpp" -o "$objects/$1.cpp.o"
}

write a 'std::free(p);'
write b 'if (p != nullptr) std::free(p); n = 0;'
if out=$("$script" "$work/build" 2>&1); then
  echo "FAIL: two definitions of Scratch<long> passed:"; echo "$out"; exit 1
fi
grep -q 'Scratch<long>::~Scratch()' <<<"$out" || { echo "FAIL: the clash is not named:"; echo "$out"; exit 1; }

write b 'std::free(p);'
"$script" "$work/build" >/dev/null || { echo "FAIL: one definition in two objects was reported"; exit 1; }
# A file compiled for one instruction set (lanes_avx*.cpp) may define no weak symbol at all.
mkdir -p "$objects/src/sample/cpu"
printf 'namespace graphtier { inline int widened(int x) { return x + 1; } }\nint use_wide(int y) { return graphtier::widened(y); }\n' \
  >"$work/wide.cpp"
g++ -std=c++20 -O0 -fPIC -c "$work/wide.cpp" -o "$objects/src/sample/cpu/lanes_avx2.cpp.o"
if out=$("$script" "$work/build" 2>&1); then
  echo "FAIL: a weak symbol in an instruction set's file passed:"; echo "$out"; exit 1
fi
grep -q 'graphtier::widened(int)' <<<"$out" || { echo "FAIL: the weak symbol is not named:"; echo "$out"; exit 1; }
echo "check-odr.sh: finds the clash, passes the agreeing pair, refuses weak symbols in an instruction set's file"
