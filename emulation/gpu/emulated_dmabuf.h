// The emulated GPU's dmabuf exports, and how an importer (the emulated HCA's ibv_reg_dmabuf_mr)
// finds the memory behind one: what the kernel's dma-buf framework does between a GPU driver and
// an RDMA driver on a real machine.
//
// A real dmabuf fd names a range of device memory: its size is the range's, and an importer
// maps offsets within it. The emulated GPU's device memory is a shm segment per allocation, so an
// export is a new descriptor of that segment's file (its own open file description, which the
// importer may keep or the exporter's user may close) plus the range it stands for, kept here by
// descriptor and checked against the file's identity: a descriptor closed and reused for another
// file is no dmabuf, as the kernel would say of it.
//
// An importer in another library, which cannot see this table (a network plugin loaded with
// dlopen, knowing nothing of braid, whose regMrDmaBuf is given the fd), finds where the range
// starts as the descriptor's file position (lseek(fd, 0, SEEK_CUR)), which the export sets:
// it then maps the range as mmap(fd, position + offset), where a real plugin's NIC driver asks
// the kernel's dma-buf framework for the pages (a real dmabuf maps its range from offset 0, and
// its position is 0).
#pragma once

#include <cstdint>
#include <optional>

namespace braid::gpu {

/// What a dmabuf descriptor stands for: `bytes` of its file from `fileOffset`.
struct DmabufRange {
  uint64_t fileOffset = 0;
  uint64_t bytes = 0;
};

/// Records that `fd` (a descriptor of a device allocation's file) exports `range` of it.
void recordDmabuf(int fd, const DmabufRange& range);
/// The range `fd` exports; nullopt where `fd` is not a live export (never one, closed, or reused
/// for another file).
std::optional<DmabufRange> findDmabuf(int fd);

}  // namespace braid::gpu
