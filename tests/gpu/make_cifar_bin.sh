#!/usr/bin/env bash
# A synthetic CIFAR-10 binary release for the tests of carrying data in parts: 5 training files and a test file
# of RECORDS random records each (label r mod 10, 3072 random pixel bytes, as incompressible as real images),
# packed as OUT_DIR/cifar10-bin.tar.xz beside a README.md naming its sha256 as the shared data's README does.
# usage: tests/gpu/make_cifar_bin.sh OUT_DIR RECORDS
set -euo pipefail
out=${1:?usage: make_cifar_bin.sh OUT_DIR RECORDS}
records=${2:?usage: make_cifar_bin.sh OUT_DIR RECORDS}
dir=$out/release/cifar-10-batches-bin
mkdir -p "$dir"
for file in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
  for ((r = 0; r < records; ++r)); do
    printf '%b' "\\x0$((r % 10))"
    head -c 3072 /dev/urandom
  done > "$dir/$file.bin"
done
tar -C "$out/release" -cf - cifar-10-batches-bin | xz -0 > "$out/cifar10-bin.tar.xz"
printf '# Data\n\n## cifar10-bin.tar.xz  (synthetic, sha256 %s)\n' "$(sha256sum < "$out/cifar10-bin.tar.xz" | cut -d' ' -f1)" \
  > "$out/README.md"
