// What every FIFO to another host must do, whatever moves its slots (socket_fifo_test for
// sockets, single and striped; ib_fifo_test for verbs): messages of every size arrive whole and
// in order, and a receiver that does not read holds its sender back without losing a slot.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>
#include <thread>

#include "transport/connection.h"

namespace braid::testing {

inline sockaddr_storage loopbackAddress() {
  sockaddr_storage a{};
  auto* in = reinterpret_cast<sockaddr_in*>(&a);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

inline transport::WaitContext within(int64_t ms) {
  transport::WaitContext ctx;
  ctx.deadline = Deadline::afterMs(ms);
  return ctx;
}

/// Sends `count` messages, message i of (i * 37) % (slot + 1) bytes with byte j = i + j, from
/// a thread, and checks each as it arrives.
inline void expectMessagesOfEverySizeInOrder(transport::SendEnd& send, transport::RecvEnd& recv,
                                             size_t slotBytes, int count = 2000) {
  auto sizeOf = [slotBytes](int i) { return static_cast<size_t>(i * 37) % (slotBytes + 1); };
  std::thread sender([&] {
    for (int i = 0; i < count; ++i) {
      auto slot = send.waitSlot(within(10000));
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      auto* bytes = static_cast<unsigned char*>(slot.value());
      for (size_t j = 0; j < sizeOf(i); ++j) bytes[j] = static_cast<unsigned char>(i + j);
      send.post(sizeOf(i));
    }
  });
  for (int i = 0; i < count; ++i) {
    size_t n = 0;
    auto slot = recv.waitSlot(within(10000), &n);
    ASSERT_TRUE(slot.ok()) << "message " << i << ": " << slot.status().message();
    ASSERT_EQ(n, sizeOf(i)) << "message " << i;
    const auto* bytes = static_cast<const unsigned char*>(slot.value());
    for (size_t j = 0; j < n; ++j) {
      ASSERT_EQ(bytes[j], static_cast<unsigned char>(i + j)) << "message " << i << " byte " << j;
    }
    recv.release();
  }
  sender.join();
}

/// With nobody receiving, posts full slots numbered 0, 1, ... until a wait for a free one gives
/// up after `waitMs`; returns how many went.
inline int fillUntilHeldBack(transport::SendEnd& send, size_t slotBytes, int64_t waitMs) {
  int sent = 0;
  for (; sent < 100000; ++sent) {
    auto slot = send.waitSlot(within(waitMs));
    if (!slot.ok()) break;
    std::memcpy(slot.value(), &sent, sizeof(sent));
    send.post(slotBytes);
  }
  return sent;
}

/// Then every one of them arrives, in order, and nothing more.
inline void expectEverySlotHeldBack(transport::RecvEnd& recv, size_t slotBytes, int sent) {
  for (int i = 0; i < sent; ++i) {
    size_t n = 0;
    auto slot = recv.waitSlot(within(5000), &n);
    ASSERT_TRUE(slot.ok()) << "message " << i << " of " << sent;
    ASSERT_EQ(n, slotBytes);
    int value = -1;
    std::memcpy(&value, slot.value(), sizeof(value));
    ASSERT_EQ(value, i);
    recv.release();
  }
  size_t n = 0;
  EXPECT_EQ(recv.trySlot(&n), nullptr);
}

}  // namespace braid::testing
