#!/usr/bin/env bash
# Builds, then runs every test. Extra arguments go to ctest: -L cuda, -R mlp, -j 4, ...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh
# The real model the end-to-end tests check (exported once, then cached). The larger
# random-weight models are made by scripts/models/prepare.sh without arguments.
./scripts/models/prepare.sh all-MiniLM-L6-v2 bert-tiny-checkpoint roberta-tiny-checkpoint distilbert-tiny-checkpoint gpt2-tiny-checkpoint \
  gpt2-tiny-generation t5-tiny-generation gpt2-bpe-tokenizer t5-unigram-tokenizer all-MiniLM-L6-v2-int8-ort all-MiniLM-L6-v2-qdq-ort all-MiniLM-L6-v2-qop-ort
ctest --test-dir build --output-on-failure "$@"
