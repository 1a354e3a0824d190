#!/bin/sh
# Entrypoint of podvirt/test-guest: puts the guest's files where the launcher looks for a
# kernelBoot container (<slot>/boot/vmlinuz, <slot>/boot/initrd.img) and for a containerDisk
# (<slot>/disk.img). Usage: copy-guest TARGET_DIR. Keeps the data disk sparse.
set -eu
target=${1:?usage: copy-guest TARGET_DIR}
guest=$(readlink -f "${PODVIRT_GUEST_DIR:-/guest}")
for f in vmlinuz initrd.img data.ext4; do
  [ -f "$guest/$f" ] || { echo "copy-guest: $guest/$f missing" >&2; exit 1; }
done
mkdir -p "$target/boot"
cp --sparse=always "$guest/vmlinuz" "$target/boot/vmlinuz"
cp --sparse=always "$guest/initrd.img" "$target/boot/initrd.img"
cp --sparse=always "$guest/data.ext4" "$target/disk.img"
