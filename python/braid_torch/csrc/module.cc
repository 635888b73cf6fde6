// braid_torch._C: the Python face of ProcessGroupBraid. braid_torch/__init__.py registers the
// backend with torch.distributed and does the rendezvous through the job's store.
#include <string>

#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "nccl.h"
#include "process_group_braid.h"
#include "work_queue.h"

namespace py = pybind11;

namespace {

// ncclGetUniqueId's 128 bytes, for rank 0 to put in the store.
py::bytes uniqueId() {
  ncclUniqueId id;
  const ncclResult_t result = ncclGetUniqueId(&id);
  TORCH_CHECK(result == ncclSuccess, "braid: ncclGetUniqueId: ", ncclGetLastError(nullptr));
  return py::bytes(id.internal, sizeof(id.internal));
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "braid's torch.distributed backend for CPU tensors (import braid_torch)";
  m.def("unique_id", &uniqueId, "A new unique id (bytes) for ProcessGroupBraid.create");
  m.def("_drain_all", &braid_torch::WorkQueue::drainAll,
        "Waits until every process group's queued operations have run (the atexit hook)");
  m.def("version", [] {
    int version = 0;
    ncclGetVersion(&version);
    return version;
  });

  // The base class is torch's, registered by torch._C._distributed_c10d; importing
  // torch.distributed first (braid_torch/__init__.py does) lets pybind11 find it.
  py::class_<braid_torch::ProcessGroupBraid, c10d::ProcessGroup,
             c10::intrusive_ptr<braid_torch::ProcessGroupBraid>>(m, "ProcessGroupBraid")
      .def_static(
          "create",
          [](c10::intrusive_ptr<c10d::Store> store, py::bytes id, int rank, int size) {
            return braid_torch::ProcessGroupBraid::create(std::move(store), std::string(id), rank,
                                                          size);
          },
          py::arg("store"), py::arg("unique_id"), py::arg("rank"), py::arg("size"),
          py::call_guard<py::gil_scoped_release>(),
          "A group of `size` ranks meeting through `unique_id` (every rank passes the same); "
          "its sends and receives meet through `store`")
      .def("_split", &braid_torch::ProcessGroupBraid::split, py::arg("store"), py::arg("key"),
           py::call_guard<py::gil_scoped_release>(),
           "new_group's members: the group of every rank that calls _split, ordered by key")
      .def("_split_out", &braid_torch::ProcessGroupBraid::splitOut,
           py::call_guard<py::gil_scoped_release>(),
           "new_group's other ranks: take part in the split without joining");
}
