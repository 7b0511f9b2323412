// Comma-separated integer lists of the command line ("0,5,7", "15,10,5", "-1,-1").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphtier::cli {

/// Parses "a,b,c" into integers; throws InvalidArgument naming `option` on an empty list, an
/// empty item or a non-integer.
std::vector<int64_t> parse_id_list(const std::string& text, const char* option);

/// Parses "1%,5%,12.5%" (the '%' optional) into fractions in (0, 1]; throws InvalidArgument naming
/// `option` otherwise.
std::vector<double> parse_percent_list(const std::string& text, const char* option);

}  // namespace graphtier::cli
