// Frame encoding of runner requests and results.
#include "oracle/runner/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace aotfuzz::oracle::runner {
namespace {

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void str(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool u8(std::uint8_t& v) {
    if (pos_ + 1 > in_.size()) return false;
    v = static_cast<std::uint8_t>(in_[pos_++]);
    return true;
  }
  bool u32(std::uint32_t& v) {
    std::uint64_t w = 0;
    if (!bytes(4, w)) return false;
    v = static_cast<std::uint32_t>(w);
    return true;
  }
  bool u64(std::uint64_t& v) { return bytes(8, v); }
  bool i32(std::int32_t& v) {
    std::uint32_t u = 0;
    if (!u32(u)) return false;
    v = static_cast<std::int32_t>(u);
    return true;
  }
  bool str(std::string& s) {
    std::uint64_t n = 0;
    if (!u64(n) || n > in_.size() - pos_) return false;
    s.assign(in_, pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool bytes(int n, std::uint64_t& v) {
    if (pos_ + static_cast<std::size_t>(n) > in_.size()) return false;
    v = 0;
    for (int i = 0; i < n; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  const std::string& in_;
  std::size_t pos_ = 0;
};

constexpr std::uint32_t kRequestTag = 0x41524232;  // "ARB2"
constexpr std::uint32_t kResultTag = 0x41525231;   // "ARR1"

}  // namespace

std::string encode(const BatchRequest& r) {
  Writer w;
  w.u32(kRequestTag);
  w.u8(static_cast<std::uint8_t>(r.mode));
  w.str(r.program);
  w.str(r.tcc_options);
  w.str(r.runtime);
  w.u32(static_cast<std::uint32_t>(r.runtime_symbols.size()));
  for (const auto& name : r.runtime_symbols) w.str(name);
  w.str(r.entry);
  w.u32(r.cases_per_child);
  w.u32(static_cast<std::uint32_t>(r.cases.size()));
  for (const auto& c : r.cases) {
    w.u32(static_cast<std::uint32_t>(c.index));
    w.u64(c.timeout_ms);
    w.u64(c.cpu_seconds);
    w.u64(c.address_space);
    w.u64(c.file_size);
    w.u64(c.output_cap);
    w.u32(static_cast<std::uint32_t>(c.inputs.size()));
    for (const auto& in : c.inputs) w.str(in);
  }
  return w.take();
}

std::string encode(const BatchResult& r) {
  Writer w;
  w.u32(kResultTag);
  w.u8(static_cast<std::uint8_t>(r.compile));
  w.str(r.diagnostics);
  w.u64(r.compile_us);
  w.u32(static_cast<std::uint32_t>(r.cases.size()));
  for (const auto& c : r.cases) {
    w.u8(static_cast<std::uint8_t>(c.end));
    w.u32(static_cast<std::uint32_t>(c.exit_code));
    w.u32(static_cast<std::uint32_t>(c.signal));
    w.u8(c.flood ? 1 : 0);
    w.u8(c.stderr_truncated ? 1 : 0);
    w.u64(c.elapsed_us);
    w.str(c.stdout_text);
    w.str(c.stderr_text);
    w.str(c.message);
  }
  return w.take();
}

std::optional<BatchRequest> decode_request(const std::string& payload) {
  Reader rd(payload);
  BatchRequest r;
  std::uint32_t tag = 0, n = 0;
  std::uint8_t mode = 0;
  if (!rd.u32(tag) || tag != kRequestTag || !rd.u8(mode) || mode > 1 || !rd.str(r.program) ||
      !rd.str(r.tcc_options) || !rd.str(r.runtime) || !rd.u32(n) || n > (1u << 16)) {
    return std::nullopt;
  }
  r.runtime_symbols.resize(n);
  for (auto& name : r.runtime_symbols) {
    if (!rd.str(name)) return std::nullopt;
  }
  if (!rd.str(r.entry) || !rd.u32(r.cases_per_child) || !rd.u32(n) || n > (1u << 20)) {
    return std::nullopt;
  }
  r.mode = static_cast<BatchRequest::Mode>(mode);
  r.cases.resize(n);
  for (auto& c : r.cases) {
    if (!rd.i32(c.index) || !rd.u64(c.timeout_ms) || !rd.u64(c.cpu_seconds) ||
        !rd.u64(c.address_space) || !rd.u64(c.file_size) || !rd.u64(c.output_cap) ||
        !rd.u32(n) || n > (1u << 20)) {
      return std::nullopt;
    }
    c.inputs.resize(n);
    for (auto& in : c.inputs) {
      if (!rd.str(in)) return std::nullopt;
    }
  }
  if (!rd.at_end()) return std::nullopt;
  return r;
}

std::optional<BatchResult> decode_result(const std::string& payload) {
  Reader rd(payload);
  BatchResult r;
  std::uint32_t tag = 0, n = 0;
  std::uint8_t compile = 0;
  if (!rd.u32(tag) || tag != kResultTag || !rd.u8(compile) || compile > 2 ||
      !rd.str(r.diagnostics) || !rd.u64(r.compile_us) || !rd.u32(n) || n > (1u << 20)) {
    return std::nullopt;
  }
  r.compile = static_cast<BatchResult::Compile>(compile);
  r.cases.resize(n);
  for (auto& c : r.cases) {
    std::uint8_t end = 0, flood = 0, trunc = 0;
    if (!rd.u8(end) || end > 3 || !rd.i32(c.exit_code) || !rd.i32(c.signal) || !rd.u8(flood) ||
        !rd.u8(trunc) || !rd.u64(c.elapsed_us) || !rd.str(c.stdout_text) ||
        !rd.str(c.stderr_text) || !rd.str(c.message)) {
      return std::nullopt;
    }
    c.end = static_cast<ChildEnd>(end);
    c.flood = flood != 0;
    c.stderr_truncated = trunc != 0;
  }
  if (!rd.at_end()) return std::nullopt;
  return r;
}

std::string frame(const std::string& payload) {
  std::string out;
  out.reserve(payload.size() + 4);
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += payload;
  return out;
}

std::size_t frame_length(std::string_view head) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < 4 && i < head.size(); ++i) {
    n |= static_cast<std::size_t>(static_cast<unsigned char>(head[i])) << (8 * i);
  }
  return n;
}

bool write_frame(int fd, const std::string& payload) {
  const std::string frame = runner::frame(payload);
  std::size_t done = 0;
  while (done < frame.size()) {
    // send: a peer that died is an error here, not a SIGPIPE for the whole process.
    ssize_t w = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, frame.data() + done, frame.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(w);
  }
  return true;
}

namespace {

// Reads exactly n bytes; false on end of file, an error or the deadline.
bool read_exact(int fd, char* out, std::size_t n, std::chrono::steady_clock::time_point deadline,
                bool has_deadline) {
  std::size_t done = 0;
  while (done < n) {
    if (has_deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) return false;
    }
    const ssize_t r = ::read(fd, out + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

std::optional<std::string> read_frame(int fd, std::size_t max_bytes, long deadline_ms) {
  const bool has_deadline = deadline_ms >= 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  char head[4];
  if (!read_exact(fd, head, 4, deadline, has_deadline)) return std::nullopt;
  const std::size_t n = frame_length(std::string_view(head, 4));
  if (n > max_bytes) return std::nullopt;
  std::string payload(n, '\0');
  if (!read_exact(fd, payload.data(), n, deadline, has_deadline)) return std::nullopt;
  return payload;
}

}  // namespace aotfuzz::oracle::runner
