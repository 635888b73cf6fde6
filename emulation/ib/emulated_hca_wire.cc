// The emulated HCAs' message format: see emulated_hca_wire.h.
#include "emulation/ib/emulated_hca_wire.h"

#include <cstring>
#include <string>

namespace braid::transport::ib::wire {
namespace {

// "bEMU" and a version: a connection from something else is refused at its first bytes.
constexpr uint32_t kHelloMagic = 0x62454d55;
constexpr uint32_t kReplyMagic = 0x62454d52;
constexpr uint8_t kVersion = 1;
constexpr uint8_t kMaxRnrRetry = 7;

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v >> 32));
  put32(p + 4, static_cast<uint32_t>(v));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) { return (uint64_t{get32(p)} << 32) | get32(p + 4); }

// Hello: magic(4) version(1) rnrRetry(1) reserved(2) srcQpNum(4) dstQpNum(4) srcGid(16).
// Request: opcode(1) reserved(3) immData(4) rkey(4) reserved(4) remoteAddr(8) length(8).
// Response: kind(1) reserved(3) value(4). HelloReply: magic(4) verdict(1) reserved(3).

}  // namespace

std::array<uint8_t, kHelloBytes> encodeHello(const Hello& hello) {
  std::array<uint8_t, kHelloBytes> b{};
  put32(&b[0], kHelloMagic);
  b[4] = kVersion;
  b[5] = hello.rnrRetry;
  put32(&b[8], hello.srcQpNum);
  put32(&b[12], hello.dstQpNum);
  memcpy(&b[16], hello.srcGid.raw, sizeof(hello.srcGid.raw));
  return b;
}

std::optional<Hello> decodeHello(const uint8_t* bytes) {
  if (get32(bytes) != kHelloMagic || bytes[4] != kVersion) return std::nullopt;
  Hello hello;
  hello.rnrRetry = bytes[5];
  hello.srcQpNum = get32(bytes + 8);
  hello.dstQpNum = get32(bytes + 12);
  memcpy(hello.srcGid.raw, bytes + 16, sizeof(hello.srcGid.raw));
  if (hello.rnrRetry > kMaxRnrRetry || hello.srcQpNum > kQpNumMask || hello.dstQpNum > kQpNumMask) {
    return std::nullopt;
  }
  return hello;
}

std::array<uint8_t, kHelloReplyBytes> encodeHelloReply(HelloVerdict verdict) {
  std::array<uint8_t, kHelloReplyBytes> b{};
  put32(&b[0], kReplyMagic);
  b[4] = static_cast<uint8_t>(verdict);
  return b;
}

std::optional<HelloVerdict> decodeHelloReply(const uint8_t* bytes) {
  if (get32(bytes) != kReplyMagic) return std::nullopt;
  uint8_t v = bytes[4];
  if (v < static_cast<uint8_t>(HelloVerdict::kAccepted) ||
      v > static_cast<uint8_t>(HelloVerdict::kWrongPeer)) {
    return std::nullopt;
  }
  return static_cast<HelloVerdict>(v);
}

std::array<uint8_t, kRequestHeaderBytes> encodeRequest(const RequestHeader& header) {
  std::array<uint8_t, kRequestHeaderBytes> b{};
  b[0] = static_cast<uint8_t>(header.opcode);
  memcpy(&b[4], &header.immData, 4);  // already network order: the bytes as they are
  put32(&b[8], header.rkey);
  put64(&b[16], header.remoteAddr);
  put64(&b[24], header.length);
  return b;
}

Result<RequestHeader> decodeRequest(const uint8_t* bytes) {
  RequestHeader header;
  uint8_t opcode = bytes[0];
  if (opcode != static_cast<uint8_t>(Opcode::kRdmaWrite) &&
      opcode != static_cast<uint8_t>(Opcode::kRdmaWriteWithImm) &&
      opcode != static_cast<uint8_t>(Opcode::kRdmaRead)) {
    return invalidArgument("unknown opcode " + std::to_string(opcode));
  }
  header.opcode = static_cast<Opcode>(opcode);
  memcpy(&header.immData, bytes + 4, 4);
  header.rkey = get32(bytes + 8);
  header.remoteAddr = get64(bytes + 16);
  header.length = get64(bytes + 24);
  if (header.opcode == Opcode::kRdmaRead && header.length > kMaxReadBytes) {
    return invalidArgument("a read of " + std::to_string(header.length) + " bytes, more than the " +
                           std::to_string(kMaxReadBytes) + " the emulation carries");
  }
  if (header.length > kMaxWriteBytes) {
    return invalidArgument("a write of " + std::to_string(header.length) +
                           " bytes, more than the 1 GiB a message may carry");
  }
  return header;
}

std::array<uint8_t, kResponseBytes> encodeResponse(const Response& response) {
  std::array<uint8_t, kResponseBytes> b{};
  b[0] = static_cast<uint8_t>(response.kind);
  put32(&b[4], response.value);
  return b;
}

std::optional<Response> decodeResponse(const uint8_t* bytes) {
  uint8_t kind = bytes[0];
  if (kind < static_cast<uint8_t>(ResponseKind::kAck) ||
      kind > static_cast<uint8_t>(ResponseKind::kReadData)) {
    return std::nullopt;
  }
  return Response{static_cast<ResponseKind>(kind), get32(bytes + 4)};
}

}  // namespace braid::transport::ib::wire
