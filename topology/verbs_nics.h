// RDMA ports as libibverbs reports them (loaded with dlopen): each active
// port of each device, with its PCI device, speed and link layer.
#pragma once

#include <string>
#include <vector>

namespace braid::topology {

struct VerbsPort {
  std::string device;     ///< "mlx5_0"
  int port = 1;           ///< port number, from 1
  std::string busId;      ///< the device's PCI function, empty when not on PCI (rxe, siw)
  int numaNode = -1;      ///< of the PCI device, -1 when unknown
  double speedGbps = 0;   ///< lanes x lane rate; 0 when the encoding is unknown
  std::string linkLayer;  ///< "InfiniBand" or "Ethernet" (RoCE)
};

struct VerbsReport {
  bool loaded = false;           ///< libibverbs.so.1 was found and had every symbol needed
  std::string note;              ///< why not loaded, or what went wrong with a device (for INFO)
  std::vector<VerbsPort> ports;  ///< active ports only: a port that is down carries nothing
};

/// Lists the active RDMA ports of this host. Never fails: no library, no
/// device, or a device that cannot be opened give fewer ports and a note.
VerbsReport listVerbsPorts();

/// Gbit/s of one lane for ibv_port_attr's active_speed (or active_speed_ex)
/// code: SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100,
/// XDR 200 (the nominal data rates); 0 for an unknown code.
double ibLaneRateGbps(unsigned activeSpeed);
/// Lanes for ibv_port_attr's active_width code (1x, 2x, 4x, 8x, 12x); 0 if unknown.
int ibLaneCount(unsigned activeWidth);
/// "InfiniBand" or "Ethernet" for ibv_port_attr's link_layer; unspecified
/// means InfiniBand (devices older than RoCE do not set it).
const char* ibLinkLayerName(unsigned linkLayer);

}  // namespace braid::topology
