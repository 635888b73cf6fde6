// LentSlices (lent_slices.h).
#include "exec/lent_slices.h"

namespace braid::exec {

LentSlices::LentSlices(const std::vector<transport::SendEnd*>& ends, const std::vector<int>& peers)
    : ends_(ends), peers_(peers) {}

bool LentSlices::mayLend(size_t port, size_t bytes) const {
  return bytes >= kMinBytes && port < ends_.size() && ends_[port] != nullptr &&
         ends_[port]->lends();
}

void LentSlices::add(size_t port, uint32_t number, const char* data, size_t bytes) {
  if (ports_.size() <= port) ports_.resize(port + 1);
  Port& p = ports_[port];
  p.last[p.count++ % p.last.size()] = {data, data + bytes, number, true};
  any_ = true;
}

Status LentSlices::waitFor(size_t port, uint32_t number, const transport::WaitContext& wait) {
  transport::WaitContext ctx = wait;
  ctx.peer = port < peers_.size() ? peers_[port] : -1;
  Status s = ends_[port]->waitReturned(number, ctx);
  if (!s.ok()) return s;
  // Lends are given back in order: every one up to `number` is back.
  for (Lend& l : ports_[port].last) {
    if (l.out && static_cast<int32_t>(number - l.number) >= 0) l.out = false;
  }
  return s;
}

Status LentSlices::clear(const char* data, size_t bytes, const transport::WaitContext& wait) {
  if (!any_) return Status();
  for (size_t port = 0; port < ports_.size(); ++port) {
    for (const Lend& l : ports_[port].last) {
      if (l.out && l.begin < data + bytes && data < l.end) {
        BRAID_TRY(waitFor(port, l.number, wait));
      }
    }
  }
  return Status();
}

Status LentSlices::returnAll(const transport::WaitContext& wait) {
  for (size_t port = 0; port < ports_.size(); ++port) {
    const Port& p = ports_[port];
    if (p.count == 0) continue;
    const Lend& lastLend = p.last[(p.count - 1) % p.last.size()];
    if (lastLend.out) BRAID_TRY(waitFor(port, lastLend.number, wait));
  }
  return Status();
}

void LentSlices::abandon() {
  for (size_t port = 0; port < ports_.size(); ++port) {
    if (ports_[port].count > 0) ends_[port]->abandonLent();
  }
}

}  // namespace braid::exec
