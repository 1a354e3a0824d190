#!/bin/sh
# ACPI power button. /init creates the flag file when booted with podvirt.acpi=ignore.
if [ -e /run/podvirt/acpi-ignore ]; then
  echo "PODVIRT-GUEST-ACPI-IGNORED" > /dev/ttyS0
  exit 0
fi
echo "PODVIRT-GUEST-ACPI-POWERBUTTON" > /dev/ttyS0
sync
poweroff -f
