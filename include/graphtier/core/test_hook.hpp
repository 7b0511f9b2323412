// Named points where a test can park a process, to interrupt it in a known state instead of after
// a guessed delay (the CLI interrupt tests kill writers parked this way).
//
// park_point(name) does nothing unless the environment variable GRAPHTIER_TEST_PARK_AT equals
// `name` (read once per process, so a call costs one comparison when it is unset). When it does,
// the process announces that it is parked -- a line on stderr, and the file named by
// GRAPHTIER_TEST_PARK_MARKER created (written under a temporary name, then renamed) when that is
// set -- and then blocks the calling thread forever, until a signal ends the process.
#pragma once

#include <string_view>

namespace graphtier {

inline constexpr const char* kParkAtVariable = "GRAPHTIER_TEST_PARK_AT";
inline constexpr const char* kParkMarkerVariable = "GRAPHTIER_TEST_PARK_MARKER";

/// Parks the calling thread at `name` when the environment asks for it (see above).
void park_point(std::string_view name);

}  // namespace graphtier
