// Words of a command line a user pastes into a POSIX shell: replay lines and the commands a
// finding prints. Nothing here runs a shell; the words only have to read back as they were.
#pragma once

#include <string>
#include <string_view>

namespace aotfuzz::host {

/// `word` as one POSIX shell word: unchanged when it holds only characters no shell treats
/// specially, else single-quoted.
std::string shell_quote(std::string_view word);
/// A file path as a word of a replay line: quoted, and kept from reading as an option.
std::string shell_quote_path(std::string_view path);

}  // namespace aotfuzz::host
