// The partition directory's manifest for graphtier.distributed: the engine's reader (fuzzed as
// partition_manifest) is the only one that checks partition.json.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "graphtier/prep/partition.hpp"

namespace graphtier::python {

void bind_partition(nb::module_& m) {
  m.def("is_partition_directory", &prep::is_partition_directory, nb::arg("dir"),
        "Whether `dir` holds a partition.json (a partition directory or one rank's directory).");
  m.def("read_partition_json", &prep::read_partition_json, nb::arg("path"),
        "The partition.json at `path`, checked (ValueError naming the file and field at fault, OSError "
        "when unreadable) and rewritten in its documented form (docs/format.md, Partition directory).",
        nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace graphtier::python
