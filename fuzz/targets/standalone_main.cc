// The fuzz targets' driver when libFuzzer is not linked (gcc builds, ctest): runs
// LLVMFuzzerTestOneInput over every file given (directories recursively, in name order), then over
// -runs=N deterministic inputs derived from them by the target's custom mutator (when it has one)
// or by simple byte mutations. A crashing input is saved to ./crash-standalone before the process
// dies. Flags it does not know (-max_total_time=, -timeout=, ...) are ignored, so the libFuzzer
// command lines of the tests work for both builds.
#include <signal.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ir/rng.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data,
                                                                     std::size_t size,
                                                                     std::size_t max_size,
                                                                     unsigned int seed);
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerCustomCrossOver(
    const std::uint8_t* data1, std::size_t size1, const std::uint8_t* data2, std::size_t size2,
    std::uint8_t* out, std::size_t max_out_size, unsigned int seed);

namespace {

using Bytes = std::vector<std::uint8_t>;

// The input being run, for the crash handler (read only from the handler).
const std::uint8_t* volatile current_data = nullptr;
volatile std::size_t current_size = 0;

// Seeds LLVMFuzzerMutate's choices; set before each generated input.
std::uint64_t mutate_seed = 1;

extern "C" void save_crash(int sig) {
  const char msg[] = "standalone: crashing input saved to ./crash-standalone\n";
  const int fd = open("crash-standalone", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    std::size_t done = 0;
    while (current_data != nullptr && done < current_size) {
      const ssize_t n = write(fd, current_data + done, current_size - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fd);
    [[maybe_unused]] ssize_t ignored = write(2, msg, sizeof(msg) - 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void run(const Bytes& input) {
  current_data = input.data();
  current_size = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
  current_data = nullptr;
}

void collect(const std::filesystem::path& path, std::vector<std::filesystem::path>& out) {
  if (std::filesystem::is_directory(path)) {
    std::vector<std::filesystem::path> entries;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path)) {
      if (e.is_regular_file()) entries.push_back(e.path());
    }
    std::sort(entries.begin(), entries.end());
    out.insert(out.end(), entries.begin(), entries.end());
  } else {
    out.push_back(path);
  }
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "standalone: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Byte-level mutation: flip a bit, set a byte, insert or erase a run, duplicate a chunk.
std::size_t byte_mutate(std::uint8_t* data, std::size_t size, std::size_t max_size,
                        aotfuzz::ir::Rng& rng) {
  switch (rng.below(5)) {
    case 0:
      if (size) data[rng.below(size)] ^= static_cast<std::uint8_t>(1u << rng.below(8));
      break;
    case 1:
      if (size) data[rng.below(size)] = static_cast<std::uint8_t>(rng.below(256));
      break;
    case 2: {
      const std::size_t n = std::min<std::size_t>(1 + rng.below(8), max_size - size);
      const std::size_t at = rng.below(size + 1);
      std::memmove(data + at + n, data + at, size - at);
      for (std::size_t i = 0; i < n; ++i) data[at + i] = static_cast<std::uint8_t>(rng.below(256));
      size += n;
      break;
    }
    case 3:
      if (size > 1) {
        const std::size_t at = rng.below(size);
        const std::size_t n = 1 + rng.below(std::min<std::size_t>(8, size - at));
        std::memmove(data + at, data + at + n, size - at - n);
        size -= n;
      }
      break;
    default:
      if (size) {
        const std::size_t from = rng.below(size);
        const std::size_t n = std::min<std::size_t>(1 + rng.below(size - from), max_size - size);
        const std::size_t at = rng.below(size + 1);
        // At max_size there is no room: n == 0, and memcpy from an empty chunk's null data()
        // is undefined behaviour even for zero bytes.
        if (n == 0) break;
        Bytes chunk(data + from, data + from + n);
        std::memmove(data + at + n, data + at, size - at);
        std::memcpy(data + at, chunk.data(), n);
        size += n;
      }
      break;
  }
  return size;
}

}  // namespace

// libFuzzer's byte mutator, for custom mutators that fall back to it.
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                        std::size_t max_size) {
  aotfuzz::ir::Rng rng(mutate_seed++);
  return byte_mutate(data, size, max_size, rng);
}

int main(int argc, char** argv) {
  long runs = 0;
  std::uint64_t seed = 1;
  std::size_t max_len = 4096;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-runs=", 0) == 0) {
      runs = std::atol(arg.c_str() + 6);
    } else if (arg.rfind("-seed=", 0) == 0) {
      seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("-max_len=", 0) == 0) {
      max_len = std::max<std::size_t>(1, std::strtoull(arg.c_str() + 9, nullptr, 10));
    } else if (arg == "-help=1" || arg == "--help") {
      std::printf("usage: %s [-runs=N] [-seed=S] [-max_len=L] [FILE|DIR]...\n"
                  "Runs every file, then N inputs mutated from them (standalone driver; "
                  "build with -DAOTFUZZ_FUZZERS=ON under clang for libFuzzer).\n",
                  argv[0]);
      return 0;
    } else if (arg.rfind("-", 0) != 0) {
      collect(arg, files);
    }
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, save_crash);
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<Bytes> pool;
  for (const auto& f : files) {
    pool.push_back(read_file(f));
    run(pool.back());
  }
  const std::size_t num_files = pool.size();
  aotfuzz::ir::Rng rng(seed);
  for (long r = 0; r < runs; ++r) {
    Bytes input;
    if (pool.empty()) {
      input.resize(rng.below(std::min<std::size_t>(max_len, 256) + 1));
      for (auto& b : input) b = static_cast<std::uint8_t>(rng.below(256));
    } else {
      input = pool[rng.below(pool.size())];
      if (input.size() > max_len) input.resize(max_len);
      std::size_t size = input.size();
      input.resize(max_len);
      if (LLVMFuzzerCustomCrossOver && rng.below(8) == 0) {
        const Bytes& other = pool[rng.below(pool.size())];
        Bytes out(max_len);
        size = LLVMFuzzerCustomCrossOver(input.data(), size, other.data(), other.size(),
                                         out.data(), max_len, static_cast<unsigned>(rng.next()));
        input = std::move(out);
      }
      const int steps = 1 + static_cast<int>(rng.below(4));
      for (int s = 0; s < steps; ++s) {
        mutate_seed = rng.next();
        size = LLVMFuzzerCustomMutator
                   ? LLVMFuzzerCustomMutator(input.data(), size, max_len,
                                             static_cast<unsigned>(rng.next()))
                   : byte_mutate(input.data(), size, max_len, rng);
      }
      input.resize(size);
    }
    run(input);
    if (pool.size() < 1000) pool.push_back(std::move(input));
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("standalone: %zu inputs (%zu files, %ld generated) in %.2f s, no crash\n",
              num_files + static_cast<std::size_t>(runs), num_files, runs, secs);
  return 0;
}
