// BRAID_IB_HCA (NCCL_IB_HCA): which HCAs and ports the verbs transport may use.
//
//   "mlx5"            devices whose names start with mlx5, every port
//   "mlx5_0:1,mlx5_1" mlx5_0's port 1, and every port of devices starting with mlx5_1
//   "=mlx5_0"         exactly mlx5_0 (not mlx5_01)
//   "^mlx5_2"         every device but those starting with mlx5_2
//
// Empty: every device and port.
#pragma once

#include <string>
#include <vector>

namespace braid::transport::ib {

class HcaFilter {
 public:
  explicit HcaFilter(const std::string& spec);
  /// Whether `port` of device `name` may be used.
  bool allows(const std::string& name, int port) const;
  /// Whether some port of device `name` may be used: false where the filter leaves the whole
  /// device out, so that it need not be opened.
  bool allowsSomePort(const std::string& name) const;

 private:
  struct Entry {
    std::string name;
    int port = -1;  // -1: any
  };
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;

  bool nameMatches(const Entry& e, const std::string& name) const;
};

}  // namespace braid::transport::ib
