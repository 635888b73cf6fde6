// PCI bus ids in one spelling, and the sysfs facts keyed by them.
//
// hwloc, the CUDA runtime, NVML and sysfs each write a device's PCI address
// differently ("0000:17:00.0", "00000000:17:00.0", upper or lower case), and
// discovery matches devices across them, so every bus id in the graph is
// normalised to the short lower-case form sysfs uses: "0000:17:00.0".
#pragma once

#include <string>

#include "braid/status.h"

namespace braid::topology {

/// "dddd:bb:dd.f" in lower case hex.
std::string formatPciBusId(unsigned domain, unsigned bus, unsigned device, unsigned function);

/// Accepts "[domain:]bus:device.function" with a domain of any width and hex
/// in any case; returns the normalised form or says which text is not a bus id.
Result<std::string> normalizePciBusId(const std::string& text);

/// The bus id of the deepest PCI device in a resolved sysfs device path
/// ("/sys/devices/pci0000:00/0000:00:03.0/virtio2" -> "0000:00:03.0"); empty
/// when the path holds none (a device that is not on PCI).
std::string pciBusIdInSysfsPath(const std::string& resolvedPath);

/// The NUMA node sysfs gives for a PCI device under `sysRoot` (normally
/// "/sys"), or -1 when unknown (no such file, or the kernel says -1).
int pciNumaNode(const std::string& sysRoot, const std::string& busId);

/// The target of a symbolic link made absolute and canonical (realpath), or
/// empty when it does not exist.
std::string resolvedPath(const std::string& path);

}  // namespace braid::topology
