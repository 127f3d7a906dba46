// Source text for a one-line message: what the parser and verify() quote of their input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aotfuzz::ir {

/// Printable ASCII as is, every other byte as \xHH, at most `max` bytes then "...".
std::string show_text(std::string_view text, std::size_t max = 40);

}  // namespace aotfuzz::ir
