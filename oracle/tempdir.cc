// RAII temporary directories: mkdtemp on creation, recursive removal on destruction.
#include "oracle/tempdir.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

namespace aotfuzz::oracle {

std::filesystem::path temp_root() {
  const char* env = ::getenv("TMPDIR");
  if (env != nullptr && env[0] != '\0') return std::filesystem::path(env);
  return std::filesystem::path("/tmp");
}

TempDir::TempDir(std::string_view prefix) {
  std::string templ = (temp_root() / (std::string(prefix) + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp(" + templ + ")");
  }
  path_ = std::filesystem::absolute(std::filesystem::path(buf.data()));
}

TempDir::~TempDir() { remove(); }

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), keep_(other.keep_) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    keep_ = other.keep_;
  }
  return *this;
}

void TempDir::remove() noexcept {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec) {
    // A child may have left a directory without write permission: restore it and retry once.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    for (auto it = std::filesystem::recursive_directory_iterator(
             path_, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code ignored;
      if (it->is_directory(ignored)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
      }
    }
    std::filesystem::remove_all(path_, ec);
  }
  path_.clear();
}

}  // namespace aotfuzz::oracle
