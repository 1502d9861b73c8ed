#!/usr/bin/env bash
# Builds the unit and op tests with sanitizers and runs them.
#   scripts/sanitize.sh address   ASan + UBSan (and LeakSanitizer), in build-asan/
#   scripts/sanitize.sh thread    TSan, in build-tsan/
# Sanitizer builds are CPU-only (INFER_WITH_CUDA=OFF: nvcc must not see the flags). Any report
# fails the run. Extra arguments go to the CMake configure step. INFER_BUILD_JOBS sets the build's
# parallelism (default: every core). SANITIZE_E2E=1 also builds and runs the end-to-end tests on
# the real model (.cache/models/all-MiniLM-L6-v2, see scripts/models/prepare.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kind=${1:-}
case "$kind" in
  address) dir=build-asan ;;
  thread) dir=build-tsan ;;
  *) echo "usage: scripts/sanitize.sh address|thread [cmake args...]" >&2; exit 2 ;;
esac
shift

./scripts/install-deps.sh

# Debug keeps assert() on; the sanitizer option itself sets -O1 -g -fno-omit-frame-pointer.
configure=(cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DINFER_SANITIZE="$kind"
  -DINFER_WITH_CUDA=OFF -DINFER_BUILD_EXAMPLES=OFF)
if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  configure+=(-G Ninja)
fi
if command -v ccache >/dev/null; then
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
"${configure[@]}" "$@"

targets=(unit_tests op_tests)
[[ "${SANITIZE_E2E:-0}" == 1 ]] && targets+=(e2e_tests)
cmake --build "$dir" --parallel "${INFER_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"

# Reports abort the test binary (halt_on_error / -fno-sanitize-recover), so a report is a failure.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [[ "$kind" == address ]]; then
  # Some tests ask for impossible sizes and expect infer::OutOfMemory, not an ASan abort.
  export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
else
  # Only reports from code that is not ours are suppressed there, each entry saying why.
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/sanitizers/tsan.supp"
fi

run() {
  echo "sanitize.sh ($kind): $*"
  local start=$SECONDS
  "$@"
  echo "sanitize.sh ($kind): passed in $((SECONDS - start)) s: $*"
}
run "$dir/bin/unit_tests"
run "$dir/bin/op_tests" --backends=cpu
if [[ "${SANITIZE_E2E:-0}" == 1 ]]; then
  run "$dir/bin/e2e_tests" '[basics]'
  run "$dir/bin/e2e_tests" --models --device cpu '[models]'
fi
echo "sanitize.sh ($kind): all passed"
