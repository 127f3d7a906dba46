// Test support: files of the repository and of the test's own temporary directories.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::test_support {

/// `relative` under the repository root (the tests read only files of the repository).
std::filesystem::path source_path(std::string_view relative);
/// The whole file; fails the current test when it cannot be opened.
std::string read_text(const std::filesystem::path& path);
/// Writes `text` to `path`; fails the current test when that does not succeed.
void write_file(const std::filesystem::path& path, const std::string& text);
/// The number of entries directly in `dir`.
std::size_t count_entries(const std::filesystem::path& dir);
/// The `.relay` files directly in `dir`, in name order.
std::vector<std::filesystem::path> relay_files(const std::filesystem::path& dir);
/// corpus/conformance/*.relay, in name order.
std::vector<std::filesystem::path> conformance_files();
/// Every `.relay` file under corpus/, in path order.
std::vector<std::filesystem::path> corpus_files();

}  // namespace aotfuzz::test_support
