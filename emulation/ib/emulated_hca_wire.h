// The messages between two emulated HCAs (verbs_emulated.h), on the TCP connection of one RC QP.
//
// The requester of a QP connects to the listener of the HCA that owns the destination QP and
// sends a Hello; that HCA answers with a HelloReply and, if it accepted, serves the connection
// with one thread. The requester then sends its work requests, each a RequestHeader followed by
// `length` payload bytes (none for an RDMA read), and the responder answers each, in order, with
// one final Response (ACK or NAK; for a read, kReadData followed by the `value` bytes read),
// preceded by kRnrWait notices while it waits for a receive to be posted.
//
// Every message has a fixed size. Integers are big-endian; immediate data travels as the four
// bytes the application gave (already in network order), so both ends see the same bytes.
// Decoding validates everything: the bytes come from another process, possibly not ours.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "braid/status.h"

namespace braid::transport::ib::wire {

constexpr size_t kHelloBytes = 32;
constexpr size_t kHelloReplyBytes = 8;
constexpr size_t kRequestHeaderBytes = 32;
constexpr size_t kResponseBytes = 8;

/// The largest RDMA write the emulation carries (ibv_port_attr::max_msg_sz).
constexpr uint64_t kMaxWriteBytes = 1ull << 30;
/// The largest RDMA read the emulation carries: the transport reads a byte to flush device
/// memory (ib_fifo_pump.h), nothing larger.
constexpr uint64_t kMaxReadBytes = 4096;
/// QP numbers are 24 bits, as on the wire of a real fabric.
constexpr uint32_t kQpNumMask = 0xffffff;

/// The first message of a connection: which QP talks to which.
struct Hello {
  uint32_t srcQpNum = 0;  ///< the requester's QP
  uint32_t dstQpNum = 0;  ///< the responder's QP, whose HCA listens where the requester connected
  ibv_gid srcGid{};       ///< the requester's source GID, for messages
  uint8_t rnrRetry = 0;   ///< the requester's rnr_retry: how long the responder may wait (RNR)
};

enum class HelloVerdict : uint8_t {
  kAccepted = 1,
  kNoSuchQp = 2,   ///< no live QP with that number on this HCA
  kNotReady = 3,   ///< the QP is not in RTR or RTS (yet)
  kWrongPeer = 4,  ///< the QP's dest_qp_num is another QP
};

enum class Opcode : uint8_t { kRdmaWrite = 1, kRdmaWriteWithImm = 2, kRdmaRead = 3 };

struct RequestHeader {
  Opcode opcode = Opcode::kRdmaWrite;
  uint32_t immData = 0;  ///< as in ibv_send_wr::imm_data: network order in memory
  uint32_t rkey = 0;
  uint64_t remoteAddr = 0;
  uint64_t length = 0;  ///< payload bytes that follow a write's header (at most kMaxWriteBytes);
                        ///< for a read, the bytes to read (at most kMaxReadBytes)
};

enum class ResponseKind : uint8_t {
  kAck = 1,              ///< the request is done (data in memory, receive completed)
  kNakRemoteAccess = 2,  ///< the responder refused the write; nothing was written
  kNakRnr = 3,           ///< no receive was posted within the requester's rnr_retry
  kRnrWait = 4,          ///< still waiting for a receive; `value` µs until the next word at most
  kReadData = 5,         ///< a read is done: its `value` bytes follow
};

struct Response {
  ResponseKind kind = ResponseKind::kAck;
  uint32_t value = 0;
};

std::array<uint8_t, kHelloBytes> encodeHello(const Hello& hello);
/// nullopt: not a hello of this protocol version, or QP numbers out of range.
std::optional<Hello> decodeHello(const uint8_t* bytes);

std::array<uint8_t, kHelloReplyBytes> encodeHelloReply(HelloVerdict verdict);
std::optional<HelloVerdict> decodeHelloReply(const uint8_t* bytes);

std::array<uint8_t, kRequestHeaderBytes> encodeRequest(const RequestHeader& header);
/// An error that says what is wrong (unknown opcode, length too large, ...).
Result<RequestHeader> decodeRequest(const uint8_t* bytes);

std::array<uint8_t, kResponseBytes> encodeResponse(const Response& response);
std::optional<Response> decodeResponse(const uint8_t* bytes);

}  // namespace braid::transport::ib::wire
