// How the emulated HCA (verbs_emulated.h) finds its own object behind a libibverbs handle.
//
// The application holds rdma-core's structs (ibv_context*, ibv_qp*, ...); each emulated object
// embeds one of them first in a VerbsHandle, next to a pointer back to the object. A
// VerbsHandle is standard layout, so a pointer to the struct the application holds is a pointer
// to its VerbsHandle, and the owner is one load away, with no table to look it up in.
#pragma once

#include <type_traits>

namespace braid::transport::ib::emulated {

template <typename Verbs, typename Owner>
struct VerbsHandle {
  Verbs verbs{};  ///< what the application sees; first, so that &verbs == this
  Owner* owner = nullptr;

  /// The object behind a handle this emulation gave out.
  static Owner* ownerOf(Verbs* verbs) {
    static_assert(std::is_standard_layout_v<VerbsHandle>, "the handle must be standard layout");
    return reinterpret_cast<VerbsHandle*>(verbs)->owner;
  }
};

}  // namespace braid::transport::ib::emulated
