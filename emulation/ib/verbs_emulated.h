// An emulated RoCE v2 HCA behind the verbs seam (verbs_api.h), for machines without RDMA
// hardware: BRAID_IB_EMULATE=N (1..8, read by Config alone, which hands it to emulateDevices)
// gives N devices, emu_0 .. emu_{N-1}, each with one active Ethernet port, unless
// BRAID_IB_EMULATE_KINDS makes some of them devices the transport cannot use (an EFA-like
// device, a port without a RoCE v2 GID or any GID, a port down: emulated_device_kinds.h). Two
// processes, on one machine or in network namespaces joined by a veth, run RC queue pairs against
// each other through it; so do QPs within one process, on one device or on two.
//
// What is emulated
//   - Devices, ports and GIDs: queryDevice and queryPort report a 100 Gb/s (4x EDR) RoCE port,
//     MTU 4096, and the limits the emulation enforces (emulated_limits.h: 256 QPs, 1024 WRs and
//     4 SGEs per queue, 64 Ki CQEs, 64 Ki MRs, 256 bytes of inline data, 1 GiB per message).
//     The GID table (emulated_gid_table.h) is read from the interfaces at openDevice: index 0 a
//     link-local RoCE v1 GID, then a RoCE v2 GID per address of each interface that is up
//     (IPv4-mapped or IPv6; loopback last).
//   - Protection domains, memory regions (keys unique in the process, never reused), completion
//     queues (resizable; an overrun puts the CQ in error: every poll fails), RC queue pairs
//     with the IB spec's state machine and attribute masks (emulated_qp_state.h).
//   - RDMA write and RDMA write with immediate, signaled or not, inline or not, with RC's
//     guarantees: delivery in order per QP; the data in memory before the receive completion of
//     a write with immediate is visible; the requester's completion after the responder's ACK.
//     The responder checks every write (rkey, PD, access, bounds, the QP's access flags) and
//     writes nothing that fails (IBV_WC_REM_ACCESS_ERR at the requester). The requester reads
//     and checks its local SGEs when the request executes, not at post time, so they must stay
//     unchanged until completion as on hardware (IBV_WC_LOC_PROT_ERR), unless IBV_SEND_INLINE
//     copied them at post time. RNR: a write with immediate that finds no receive waits
//     rnr_retry times the responder's min_rnr_timer (the IB spec's table: 10 µs .. 655 ms), or
//     for ever with rnr_retry 7, then fails with IBV_WC_RNR_RETRY_EXC_ERR. The transport
//     timeout: a request unanswered for 4.096 µs * 2^timeout * (retry_cnt + 1) fails with
//     IBV_WC_RETRY_EXC_ERR (timeout 0: never). Any failure moves the QP to ERR, which flushes
//     all its other work (IBV_WC_WR_FLUSH_ERR, signaled or not); posting in ERR completes at once
//     with IBV_WC_WR_FLUSH_ERR.
//   - The wire: one TCP connection per QP, from the requester's process to the listener of the
//     responder's HCA, found from the destination GID (its IP address) and dest_qp_num, whose
//     upper 16 bits are that listener's port (qp_num = port << 8 | slot). A peer that is not in
//     RTR yet, not up yet or unreachable is retried every millisecond until the transport
//     timeout; a connection that breaks (the peer died, or destroyed its QP) is silence, as on a
//     fabric, so outstanding writes end with that timeout. The responder validates every byte it
//     reads (emulated_hca_wire.h): bytes that make no request close the connection and move its
//     QP to ERR, and nothing is ever written outside a region.
//
// What is not
//   - Any opcode but RDMA write (with or without immediate): send, RDMA read and atomics are
//     refused at post time (EINVAL), since the transport uses none of them. Nor are SRQs,
//     UD/UC/XRC QPs, memory windows, alternate paths, completion channels, or async events
//     other than a port going down (IBV_EVENT_PORT_ERR, emulated_async_events.h).
//   - RoCE v1: a QP whose source GID (sgid_index) or destination GID is a RoCE v1 (link-local)
//     GID never reaches its peer, as RoCE v1 cannot cross an IP router; its writes end with
//     IBV_WC_RETRY_EXC_ERR after the transport timeout.
//   - Pinning: a registered region must stay mapped until it is deregistered. Writes into it
//     (remote writes, and reads of local SGEs) happen under the device's region lock, so once
//     deregMr returns none lands in it.
//   - PSNs, path MTU, P_Keys (one, index 0), service levels and traffic classes are checked and
//     recorded but change nothing: TCP carries each message whole and in order.
//   - Where the spec leaves room or real HCAs differ, the emulation chose: a remote access error
//     moves the responder's QP to ERR too (flushing its posted receives), not only the
//     requester's; RNR leaves the responder's QP as it was; a zero-byte write checks no rkey (as
//     the IB spec says); the RNR wait happens at the responder, which tells the requester at
//     most every millisecond that it is still waiting (the requester's ACK timer restarts on
//     each word) instead of NAK-and-retransmit; a send queue slot is free once its request is
//     answered, signaled or not; byte_len of send completions is 0.
//   - Speed: a thread per QP sends (reading the local memory) and a thread per connection
//     receives (copying into the registered memory), so the emulation is as fast as TCP and
//     memcpy, and each QP costs two threads once connected.
#pragma once

#include "transport/net/ib/verbs_api.h"

// Its entry point, emulatedVerbs(), is declared with the seam it fills, in verbs_api.h, so that
// the transport chooses it without including anything of emulation/.
