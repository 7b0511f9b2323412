#include "graphtier/core/test_hook.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace graphtier {
namespace {

struct ParkRequest {
  std::string point;   // empty: parking is off
  std::string marker;  // file to create once parked; empty: none
};

const ParkRequest& park_request() {
  static const ParkRequest request = [] {
    ParkRequest r;
    if (const char* point = std::getenv(kParkAtVariable)) r.point = point;
    if (const char* marker = std::getenv(kParkMarkerVariable)) r.marker = marker;
    return r;
  }();
  return request;
}

void write_marker(const std::string& path, std::string_view name) {
  // Renamed into place so that a test polling for the file never reads a partial one.
  const std::string temp = path + ".tmp";
  if (std::FILE* f = std::fopen(temp.c_str(), "w")) {
    std::fprintf(f, "%.*s %ld\n", static_cast<int>(name.size()), name.data(), static_cast<long>(::getpid()));
    std::fclose(f);
    std::rename(temp.c_str(), path.c_str());
  }
}

}  // namespace

void park_point(std::string_view name) {
  const ParkRequest& request = park_request();
  if (request.point.empty() || request.point != name) return;
  std::fprintf(stderr, "graphtier: parked at %.*s (pid %ld)\n", static_cast<int>(name.size()), name.data(),
               static_cast<long>(::getpid()));
  std::fflush(stderr);
  if (!request.marker.empty()) write_marker(request.marker, name);
  for (;;) ::pause();  // returns after a handled signal; only a fatal one ends the wait
}

}  // namespace graphtier
