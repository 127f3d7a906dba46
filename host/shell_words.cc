// Quoting for POSIX shell words.
#include "host/shell_words.h"

namespace aotfuzz::host {

std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./:=@%+,") == std::string_view::npos;
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_quote_path(std::string_view path) {
  if (!path.empty() && path.front() == '-') return shell_quote("./" + std::string(path));
  return shell_quote(path);
}

}  // namespace aotfuzz::host
