#!/usr/bin/env bash
# Runs every fuzz target (fuzz/README.md) for SECONDS each, one per core at a time, and prints one
# table: target, execs, exec/s, coverage (libFuzzer's cov and ft), corpus, crashes. Exit status 1
# if any target crashed, hung (-timeout=10) or allocated too much (-rss_limit_mb=2048); the input
# that did it is kept where the message says.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     # SECONDS per target (default 60); all targets by default
#   scripts/fuzz.sh --runs N [TARGET...]      # N executions per target instead (the long run)
#
# Configures and builds the fuzz preset first (clang, build/fuzz/; nothing to do when it is up to
# date). Each target runs on a fresh scratch copy of its committed seeds (fuzz/corpus/<target>/) and
# of the corpus kept from earlier runs on this machine, under build/fuzz-work/<target>/ (corpus/,
# crashes/, log; $GRAPHTIER_FUZZ_WORK moves it): fuzz/corpus is never written. The kept corpus lives
# outside the clone ($GRAPHTIER_FUZZ_CORPUS, default ~/.cache/graphtier/fuzz-corpus/<target>/): after
# a timed run that found nothing wrong, libFuzzer merges the scratch corpus into it (-merge=1: the
# inputs that add coverage), so each CI run goes on from where the last one on this machine stopped
# and a short run per target reaches the depth of a long one (native targets; the Python target
# starts from its seeds every time). The Python target (checkpoint) runs under atheris
# (scripts/setup.sh --fuzz installs it into .venv), or, where atheris cannot be installed, under
# the seeded mutation loop of fuzz/checkpoint_fuzz.py.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/compiler-cache.sh
source scripts/compiler-cache.sh

seconds=60
runs=""
if [ "${1:-}" = "--runs" ]; then
  runs="${2:?--runs needs a count}"
  shift 2
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi
all=(manifest npy_header npy_array zip gzip edge_list ogb igb partition_manifest row_wire checkpoint)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

scripts/setup.sh --fuzz
[ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

flags=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
if [ -n "$runs" ]; then flags+=("-runs=$runs"); else flags+=("-max_total_time=$seconds"); fi
python_mode=atheris
.venv/bin/python -c "import atheris" 2>/dev/null || python_mode=mutate

work="${GRAPHTIER_FUZZ_WORK:-build/fuzz-work}"
kept_root="${GRAPHTIER_FUZZ_CORPUS:-$HOME/.cache/graphtier/fuzz-corpus}"
for t in "${targets[@]}"; do
  [ "$t" = checkpoint ] || [ -x "build/fuzz/fuzz/${t}_fuzz" ] || { echo "fuzz: unknown target $t" >&2; exit 2; }
done

# One target: a fresh scratch corpus (the seeds and the kept corpus), the fuzzer's log, its exit
# status in $dir/rc; then the scratch corpus merged into the kept one.
run_target() {
  local t="$1" dir="$work/$1" kept="" rc=0 mode=() fuzzer
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/crashes"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
  if [ "$t" = checkpoint ]; then
    fuzzer=(.venv/bin/python fuzz/checkpoint_fuzz.py)
    [ "$python_mode" = mutate ] && mode=(--mutate)
  else
    fuzzer=("build/fuzz/fuzz/${t}_fuzz")
    kept="$kept_root/$t"
    mkdir -p "$kept"
    cp -r "$kept/." "$dir/corpus/"
  fi
  "${fuzzer[@]}" "${mode[@]}" "$dir/corpus" "${flags[@]}" -artifact_prefix="$dir/crashes/" >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
  # Only the native targets keep a corpus: libFuzzer's merge re-executes the fuzzer's argv[0], which
  # for the Python target is a script that needs its venv's interpreter. A run that failed keeps
  # its evidence in $dir only.
  if [ "$rc" = 0 ] && [ -z "$runs" ] && [ -n "$kept" ]; then
    rm -rf "$kept.new" && mkdir -p "$kept.new"
    if "${fuzzer[@]}" -merge=1 -rss_limit_mb=2048 -timeout=10 "$kept.new" "$dir/corpus" >"$dir/merge.log" 2>&1; then
      rm -rf "$kept" && mv "$kept.new" "$kept"
    else
      echo "fuzz: $t: merging into $kept failed ($dir/merge.log); the kept corpus is unchanged" >&2
      rm -rf "$kept.new"
    fi
  fi
}

# The targets run side by side, one per core ($GRAPHTIER_FUZZ_JOBS, default nproc): each fuzzer is
# one single-threaded process, so the cores' worth of them take the time of one.
jobs="${GRAPHTIER_FUZZ_JOBS:-$(nproc)}"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: GRAPHTIER_FUZZ_JOBS=$jobs is not a positive count" >&2; exit 2; }
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  echo "fuzz: $t ($([ -n "$runs" ] && echo "$runs runs" || echo "${seconds} s"))" >&2
  run_target "$t" &
  running=$((running + 1))
done
wait

rows=()
failed=()
for t in "${targets[@]}"; do
  dir="$work/$t"
  rc=$(cat "$dir/rc" 2>/dev/null || echo "no status")
  stat() { sed -n "s/^stat::$1: *\([0-9]*\).*/\1/p" "$dir/log" | tail -1; }
  # The last status line: "#N  DONE cov: C ft: F corp: K/SIZE ...".
  status=$(grep -E '^#[0-9]+.*cov: ' "$dir/log" | tail -1 || true)
  field() { sed -n "s/.* $1: \([^ ]*\).*/\1/p" <<<"$status"; }
  crashes=$(find "$dir/crashes" -type f | wc -l)
  if [ "$rc" != 0 ] || ((crashes != 0)); then
    failed+=("$t: exit $rc; input kept in $dir/crashes/ ($(ls "$dir/crashes" | tr '\n' ' ')), log $dir/log")
    ((crashes)) || crashes=1
  fi
  rows+=("$(printf '%-11s %12s %8s %6s %7s %10s %7s' "$t" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$(field cov)" "$(field ft)" "$(field corp)" "$crashes")")
done

printf '%-11s %12s %8s %6s %7s %10s %7s\n' target execs exec/s cov ft corpus crashes
printf '%s\n' "${rows[@]}"
[ "$python_mode" = mutate ] && echo "(checkpoint: atheris unavailable, seeded mutation loop: no coverage figures)"
if ((${#failed[@]})); then
  printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
