// ProcessGroupBraid's collectives: each checks its tensors on the caller's thread, then queues
// the braid calls. Lists of per-rank tensors are packed into one contiguous buffer on the queue's
// thread (braid moves one buffer per rank) and unpacked after.
#include <numeric>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "braid_ext.h"
#include "process_group_braid.h"

namespace braid_torch {

namespace {

/// The one list of per-rank tensors of an all-gather, gather or reduce-scatter: `size` tensors.
const std::vector<at::Tensor>& rankList(const std::vector<std::vector<at::Tensor>>& lists, int size,
                                        const std::string& what) {
  TORCH_CHECK(lists.size() == 1, "braid: ", what, " takes one list of tensors, got ", lists.size());
  TORCH_CHECK(static_cast<int>(lists[0].size()) == size, "braid: ", what, " needs one tensor per ",
              "rank (", size, "), got ", lists[0].size());
  return lists[0];
}

/// One flat tensor of the list's elements, rank by rank.
at::Tensor pack(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

/// Copies consecutive pieces of `flat` back into the tensors.
void unpack(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

std::vector<size_t> numels(const std::vector<at::Tensor>& tensors) {
  std::vector<size_t> counts;
  for (const at::Tensor& t : tensors) counts.push_back(t.numel());
  return counts;
}

/// Elements per rank of an all-to-all's tensor: `splits` rows each (dim 0), or equal shares.
std::vector<size_t> splitCounts(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                                const char* what) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t rowElements = rows == 0 ? 0 : t.numel() / rows;
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "braid: all_to_all's ", what, " has ", rows,
                " rows, not a multiple of the ", size, " ranks");
    return std::vector<size_t>(size, static_cast<size_t>(rows / size * rowElements));
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, "braid: all_to_all's ", what,
              " split sizes have ", splits.size(), " entries for ", size, " ranks");
  int64_t sum = 0;
  std::vector<size_t> counts;
  for (int64_t s : splits) {
    TORCH_CHECK(s >= 0, "braid: all_to_all's ", what, " split sizes include ", s);
    sum += s;
    counts.push_back(static_cast<size_t>(s * rowElements));
  }
  TORCH_CHECK(sum == rows, "braid: all_to_all's ", what, " split sizes add up to ", sum,
              " but the tensor has ", rows, " rows");
  return counts;
}

}  // namespace

// --- the calls, on the queue's thread --------------------------------------------------------

void ProcessGroupBraid::allReduceNow(const at::Tensor& tensor, const Reduction& reduction) {
  if (reduction.kind == Reduction::Kind::kBitwise) {
    at::Tensor gathered = at::empty({size_, tensor.numel()}, tensor.options());
    allGatherNow(tensor, gathered);
    tensor.copy_(foldBitwise(gathered, reduction.torchOp).view(tensor.sizes()));
    return;
  }
  const ncclDataType_t type = datatypeOf(tensor);
  ScopedOp op(reduction, type, comm_);
  check(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), type, op.get(), comm_,
                      nullptr),
        "all_reduce");
}

void ProcessGroupBraid::allGatherNow(const at::Tensor& input, const at::Tensor& output) {
  check(ncclAllGather(input.data_ptr(), output.data_ptr(), input.numel(), datatypeOf(input), comm_,
                      nullptr),
        "all_gather");
}

void ProcessGroupBraid::reduceScatterNow(const at::Tensor& input, const at::Tensor& output,
                                         const Reduction& reduction) {
  if (reduction.kind == Reduction::Kind::kBitwise) {
    at::Tensor gathered = at::empty({size_, input.numel()}, input.options());
    allGatherNow(input, gathered);
    at::Tensor folded = foldBitwise(gathered, reduction.torchOp);
    output.copy_(folded.narrow(0, rank_ * output.numel(), output.numel()).view(output.sizes()));
    return;
  }
  const ncclDataType_t type = datatypeOf(input);
  ScopedOp op(reduction, type, comm_);
  check(ncclReduceScatter(input.data_ptr(), output.data_ptr(), output.numel(), type, op.get(),
                          comm_, nullptr),
        "reduce_scatter");
}

void ProcessGroupBraid::allToAllVNow(const at::Tensor& input, const std::vector<size_t>& sendCounts,
                                     const at::Tensor& output,
                                     const std::vector<size_t>& recvCounts) {
  std::vector<size_t> sendDispls(size_, 0), recvDispls(size_, 0);
  std::exclusive_scan(sendCounts.begin(), sendCounts.end(), sendDispls.begin(), size_t{0});
  std::exclusive_scan(recvCounts.begin(), recvCounts.end(), recvDispls.begin(), size_t{0});
  check(braidAlltoAllV(input.data_ptr(), sendCounts.data(), sendDispls.data(), output.data_ptr(),
                       recvCounts.data(), recvDispls.data(), datatypeOf(input), comm_, nullptr),
        "all_to_all");
}

// --- the collectives ---------------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::broadcast(std::vector<at::Tensor>& tensors,
                                                            const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "broadcast");
  checkTensor(t, "broadcast's tensor");
  checkRank(opts.rootRank, "broadcast's root");
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, tensors, [this, t, root] {
    check(ncclBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), datatypeOf(t), root, comm_, nullptr),
          "broadcast");
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::allreduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "all_reduce");
  checkTensor(t, "all_reduce's tensor");
  const Reduction reduction = reductionFor(opts.reduceOp, t);
  return enqueue(c10d::OpType::ALLREDUCE, tensors,
                 [this, t, reduction] { allReduceNow(t, reduction); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "braid: all_reduce_coalesced of no tensors");
  checkTensor(tensors[0], "all_reduce_coalesced's tensor[0]");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = "all_reduce_coalesced's tensor[" + std::to_string(i) + "]";
    checkTensor(tensors[i], name);
    TORCH_CHECK(tensors[i].scalar_type() == tensors[0].scalar_type(), "braid: ", name, " is ",
                tensors[i].scalar_type(), " but tensor[0] is ", tensors[0].scalar_type());
  }
  const Reduction reduction = reductionFor(opts.reduceOp, tensors[0]);
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors, [this, tensors, reduction] {
    at::Tensor flat = pack(tensors);
    allReduceNow(flat, reduction);
    unpack(flat, tensors);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::reduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::ReduceOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "reduce");
  checkTensor(t, "reduce's tensor");
  checkRank(opts.rootRank, "reduce's root");
  const Reduction reduction = reductionFor(opts.reduceOp, t);
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::REDUCE, tensors, [this, t, reduction, root] {
    if (reduction.kind == Reduction::Kind::kBitwise) {
      at::Tensor gathered = at::empty({size_, t.numel()}, t.options());
      allGatherNow(t, gathered);
      if (rank_ == root) t.copy_(foldBitwise(gathered, reduction.torchOp).view(t.sizes()));
      return;
    }
    const ncclDataType_t type = datatypeOf(t);
    ScopedOp op(reduction, type, comm_);
    check(ncclReduce(t.data_ptr(), t.data_ptr(), t.numel(), type, op.get(), root, comm_, nullptr),
          "reduce");
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  const at::Tensor& in = onlyTensor(inputs, "all_gather");
  checkTensor(in, "all_gather's input");
  const std::vector<at::Tensor>& out = rankList(outputs, size_, "all_gather");
  checkSameShape(out, in, "all_gather's output");
  return enqueue(c10d::OpType::ALLGATHER, out, [this, in, out] {
    at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
    allGatherNow(in, flat);
    unpack(flat, out);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::_allgather_base(at::Tensor& output,
                                                                  at::Tensor& input,
                                                                  const c10d::AllgatherOptions&) {
  checkTensor(input, "all_gather's input");
  checkTensor(output, "all_gather's output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: all_gather's output is ",
              output.scalar_type(), " but its input is ", input.scalar_type());
  TORCH_CHECK(output.numel() == size_ * input.numel(), "braid: all_gather's output has ",
              output.numel(), " elements, not ", size_, " x ", input.numel());
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output},
                 [this, input, output] { allGatherNow(input, output); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputLists.size() == inputs.size(), "braid: all_gather_coalesced has ",
              inputs.size(), " inputs but ", outputLists.size(), " output lists");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(inputs[i], "all_gather_coalesced's input");
    rankList({outputLists[i]}, size_, "all_gather_coalesced");
    checkSameShape(outputLists[i], inputs[i], "all_gather_coalesced's output");
  }
  std::vector<at::Tensor> all;
  for (const auto& list : outputLists) all.insert(all.end(), list.begin(), list.end());
  return enqueue(c10d::OpType::ALLGATHER_COALESCED, all, [this, outputLists, inputs] {
    for (size_t i = 0; i < inputs.size(); ++i) {
      at::Tensor flat = at::empty({size_ * inputs[i].numel()}, inputs[i].options());
      allGatherNow(inputs[i], flat);
      unpack(flat, outputLists[i]);
    }
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  const at::Tensor& in = onlyTensor(inputs, "gather");
  checkTensor(in, "gather's input");
  checkRank(opts.rootRank, "gather's root");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> out;
  if (rank_ == root) {
    out = rankList(outputs, size_, "gather at its root");
    checkSameShape(out, in, "gather's output");
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "braid: gather takes output tensors only at its root");
  }
  return enqueue(c10d::OpType::GATHER, out, [this, in, out, root] {
    at::Tensor flat;
    if (rank_ == root) flat = at::empty({size_ * in.numel()}, in.options());
    check(ncclGather(in.data_ptr(), rank_ == root ? flat.data_ptr() : nullptr, in.numel(),
                     datatypeOf(in), root, comm_, nullptr),
          "gather");
    if (rank_ == root) unpack(flat, out);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  const at::Tensor& out = onlyTensor(outputs, "scatter");
  checkTensor(out, "scatter's output");
  checkRank(opts.rootRank, "scatter's root");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> in;
  if (rank_ == root) {
    in = rankList(inputs, size_, "scatter at its root");
    checkSameShape(in, out, "scatter's input");
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "braid: scatter takes input tensors only at its root");
  }
  return enqueue(c10d::OpType::SCATTER, outputs, [this, in, out, root] {
    at::Tensor flat;
    if (rank_ == root) flat = pack(in);
    check(ncclScatter(rank_ == root ? flat.data_ptr() : nullptr, out.data_ptr(), out.numel(),
                      datatypeOf(out), root, comm_, nullptr),
          "scatter");
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = onlyTensor(outputs, "reduce_scatter");
  checkTensor(out, "reduce_scatter's output");
  const std::vector<at::Tensor>& in = rankList(inputs, size_, "reduce_scatter");
  checkSameShape(in, out, "reduce_scatter's input");
  const Reduction reduction = reductionFor(opts.reduceOp, out);
  return enqueue(c10d::OpType::REDUCE_SCATTER, outputs,
                 [this, in, out, reduction] { reduceScatterNow(pack(in), out, reduction); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkTensor(input, "reduce_scatter's input");
  checkTensor(output, "reduce_scatter's output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: reduce_scatter's output is ",
              output.scalar_type(), " but its input is ", input.scalar_type());
  TORCH_CHECK(input.numel() == size_ * output.numel(), "braid: reduce_scatter's input has ",
              input.numel(), " elements, not ", size_, " x ", output.numel());
  const Reduction reduction = reductionFor(opts.reduceOp, output);
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {output},
                 [this, input, output, reduction] { reduceScatterNow(input, output, reduction); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::alltoall_base(at::Tensor& output,
                                                                at::Tensor& input,
                                                                std::vector<int64_t>& outputSplits,
                                                                std::vector<int64_t>& inputSplits,
                                                                const c10d::AllToAllOptions&) {
  checkTensor(input, "all_to_all's input");
  checkTensor(output, "all_to_all's output");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: all_to_all's output is ",
              output.scalar_type(), " but its input is ", input.scalar_type());
  const std::vector<size_t> sendCounts = splitCounts(input, inputSplits, size_, "input");
  const std::vector<size_t> recvCounts = splitCounts(output, outputSplits, size_, "output");
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output},
                 [this, input, output, sendCounts, recvCounts] {
                   allToAllVNow(input, sendCounts, output, recvCounts);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::alltoall(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllToAllOptions&) {
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
              "braid: all_to_all takes one input and one output tensor per rank (", size_,
              "), got ", inputs.size(), " and ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(inputs[i], "all_to_all's input");
    checkTensor(outputs[i], "all_to_all's output");
    TORCH_CHECK(inputs[i].scalar_type() == inputs[0].scalar_type() &&
                    outputs[i].scalar_type() == inputs[0].scalar_type(),
                "braid: all_to_all's tensors must have one element type");
  }
  return enqueue(c10d::OpType::ALLTOALL, outputs, [this, inputs, outputs] {
    std::vector<size_t> recvCounts = numels(outputs);
    at::Tensor received = at::empty(
        {std::accumulate(recvCounts.begin(), recvCounts.end(), int64_t{0})}, outputs[0].options());
    allToAllVNow(pack(inputs), numels(inputs), received, recvCounts);
    unpack(received, outputs);
  });
}

}  // namespace braid_torch
