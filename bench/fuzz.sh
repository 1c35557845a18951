#!/usr/bin/env bash
# A long fuzzing campaign over every parser: the test CI runs with a handful of cases per seed
# (crates/trail-sources/tests/fuzz.rs), run here with many more, a fresh random seed each run,
# and an optimized build (so one case takes microseconds, not milliseconds).
#
# usage: bench/fuzz.sh [CASES_PER_SEED] [SEED]
#   CASES_PER_SEED  mutated inputs per seed file (default 2000; CI runs 4)
#   SEED            the random seed (default: a new one; printed, so a failure can be replayed)
#
# Seeds: every file of ../shared/corpus, crates/*/tests/fixtures and examples/. Failing inputs
# are written to target/fuzz-failures/ and listed at the end; replay one run with
#   bench/fuzz.sh CASES SEED
set -euo pipefail
cd "$(dirname "$0")/.."

cases="${1:-2000}"
seed="${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
echo "fuzz campaign: ${cases} cases per seed, seed ${seed}"
TRAIL_FUZZ_CASES="$cases" PROPTEST_RNG_SEED="$seed" \
  cargo test --release -p trail-sources --test fuzz -- --nocapture
