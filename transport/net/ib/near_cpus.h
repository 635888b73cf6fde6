// Where a verbs proxy runs: on the CPUs of the NUMA node its first HCA hangs off, so completions
// and the FIFO words it polls stay on the NIC's side of the socket link. The node comes from
// sysfs (/sys/class/infiniband/<device>/device/numa_node), its CPUs from
// /sys/devices/system/node/node<N>/cpulist, kept to those the process may use. Devices with no
// node (-1: single-socket machines, the emulated HCA) leave the thread where it is.
#pragma once

#include <string>
#include <vector>

namespace braid::transport::ib {

/// The CPUs near `device`, read under `sysfsRoot` ("/sys" outside tests) and intersected with
/// `allowed`; empty when nothing is known or nothing is left.
std::vector<int> cpusNearDevice(const std::string& sysfsRoot, const std::string& device,
                                const std::vector<int>& allowed);

/// Binds the calling thread to `cpus` (nothing when empty); false when the system refused.
bool bindThisThread(const std::vector<int>& cpus);

}  // namespace braid::transport::ib
