#include "bundles/status_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <thread>

#include "bundles/bundle.h"
#include "bundles/campaign_stats.h"
#include "oracle/verdict.h"

namespace aotfuzz::bundles {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& text) {
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + string at -O3.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp-";
  name += std::to_string(::getpid());
  // Two campaigns of one process may write the same file: each thread has its own temporary.
  name += '-';
  name += std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  const fs::path tmp = path.parent_path() / name;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::system_error(errno ? errno : EIO, std::generic_category(),
                              "cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::system_error(ec, "cannot rename to " + path.string());
  }
}

namespace {

double rate(const StatusSnapshot& s) {
  return s.progress.elapsed_s > 0 ? static_cast<double>(s.progress.cases) / s.progress.elapsed_s
                                  : 0.0;
}

}  // namespace

std::string fuzzer_stats_text(const StatusSnapshot& s) {
  std::ostringstream out;
  auto line = [&](const std::string& key, const std::string& value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-24s: ", key.c_str());
    out << buf << value << "\n";
  };
  char r[32];
  std::snprintf(r, sizeof r, "%.2f", rate(s));
  line("start_time", std::to_string(s.start_time));
  line("last_update", std::to_string(s.now));
  line("run_time", std::to_string(static_cast<long long>(s.progress.elapsed_s)));
  line("fuzzer_pid", std::to_string(::getpid()));
  line("seed", std::to_string(s.seed));
  line("jobs", std::to_string(s.jobs));
  line("cases_done", std::to_string(s.progress.cases));
  line("cases_per_sec", r);
  line("finding_cases", std::to_string(s.progress.finding_cases));
  line("unique_signatures", std::to_string(s.progress.unique_signatures));
  line("last_new_finding", std::to_string(s.last_new_finding));
  line("toolchain_errors", std::to_string(s.progress.toolchain_errors));
  if (!s.command_line.empty()) line("command_line", s.command_line);
  if (!s.version.empty()) line("aotfuzz_version", s.version);
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    const auto kind = static_cast<oracle::VerdictKind>(k);
    const std::uint64_t n = s.stats.count(kind);
    if (n > 0) line("verdicts_" + std::string(oracle::verdict_kind_name(kind)), std::to_string(n));
  }
  // Shares of worker time (elapsed x jobs), "other" included: the summary's definition.
  const double worker_s = std::max(0.0, s.progress.elapsed_s) * std::max(1, s.jobs);
  const auto phases = s.stats.phase_seconds(worker_s);
  double total = 0;
  for (const auto& [name, secs] : phases) total += secs;
  for (const auto& [name, secs] : phases) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f", total > 0 ? 100.0 * secs / total : 0.0);
    line("time_share_" + name, share);
  }
  return out.str();
}

const char* const kPlotDataHeader =
    "# unix_time, relative_time, cases, cases_per_sec, unique_signatures, finding_cases, "
    "multi_output_cases, fused_tuple_param_cases, structure_cases";

std::string plot_data_row(const StatusSnapshot& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%lld, %lld, %llu, %.2f, %zu, %llu, %llu, %llu, %llu",
                static_cast<long long>(s.now), static_cast<long long>(s.progress.elapsed_s),
                static_cast<unsigned long long>(s.progress.cases), rate(s),
                s.progress.unique_signatures,
                static_cast<unsigned long long>(s.progress.finding_cases),
                static_cast<unsigned long long>(s.stats.cases_with_multi_output_region),
                static_cast<unsigned long long>(s.stats.cases_with_fused_tuple_param),
                static_cast<unsigned long long>(s.stats.count(oracle::VerdictKind::kStructure)));
  return buf;
}

std::vector<PlotRow> parse_plot_data(const std::string& text) {
  std::vector<PlotRow> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    PlotRow r;
    long long t = 0;
    unsigned long long c = 0, u = 0, f = 0, m = 0, ft = 0, st = 0;
    char tail = 0;
    if (std::sscanf(line.c_str(), "%lld, %lf, %llu, %lf, %llu, %llu, %llu, %llu, %llu %c", &t,
                    &r.relative_time, &c, &r.cases_per_sec, &u, &f, &m, &ft, &st, &tail) != 9) {
      continue;
    }
    r.unix_time = static_cast<std::time_t>(t);
    r.cases = c;
    r.unique_signatures = u;
    r.finding_cases = f;
    r.multi_output_cases = m;
    r.fused_tuple_param_cases = ft;
    r.structure_cases = st;
    rows.push_back(r);
  }
  return rows;
}

nlohmann::json campaign_record(const StatusSnapshot& s) {
  nlohmann::json j = stats_json(s.stats);
  j.update({{"start_time", s.start_time},
            {"last_update", s.now},
            {"seed", s.seed},
            {"jobs", s.jobs},
            {"elapsed_s", s.progress.elapsed_s},
            {"cases_per_s", rate(s)},
            {"finding_cases", s.progress.finding_cases},
            {"unique_signatures", s.progress.unique_signatures},
            {"last_new_finding", s.last_new_finding}});
  return j;
}

std::vector<nlohmann::json> read_campaign_records(const fs::path& dir) {
  std::vector<nlohmann::json> records;
  std::vector<fs::path> files;
  std::error_code ec;
  fs::directory_iterator it(dir / "campaigns", ec);
  if (ec) return records;
  for (const auto& entry : it) {
    const fs::path& p = entry.path();
    if (p.extension() == ".json" && p.filename().string().front() != '.') files.push_back(p);
  }
  // Named <start_time>-<pid>-<n>: name order, then start time, gives one order on every machine.
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    try {
      auto j = nlohmann::json::parse(read_text_file(p));
      if (j.is_object() && j.contains("start_time")) records.push_back(std::move(j));
    } catch (const std::exception&) {
      // Not a record of ours: the report shows the others.
    }
  }
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.value("start_time", 0LL) < b.value("start_time", 0LL);
  });
  return records;
}

namespace {

// <start>-<pid>-<n>.json, n counting the campaigns of this process that started in that second
// (zero-padded, so that name order is start order): the name is taken by creating the file, so
// two campaigns never share one.
std::string reserve_record_name(const fs::path& campaigns, std::time_t start) {
  const std::string base = std::to_string(start) + "-" + std::to_string(::getpid()) + "-";
  for (int n = 1;; ++n) {
    char counter[16];
    std::snprintf(counter, sizeof counter, "%03d", n);
    const std::string name = base + counter + ".json";
    const int fd =
        ::open((campaigns / name).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return name;
    }
    if (errno != EEXIST) {
      throw std::system_error(errno, std::generic_category(), (campaigns / name).string());
    }
  }
}

}  // namespace

namespace {

// Takes the directory's status files for this campaign (an flock held until `fd` is closed) and
// writes its pid into the lock file; otherwise returns the pid of the campaign that holds them.
long take_directory_files(const fs::path& dir, int& fd) {
  std::error_code ec;
  fs::create_directories(dir / "campaigns", ec);
  fd = ::open((dir / "campaigns" / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // A directory this process cannot write: the updates fail and are warned of, as before.
  if (fd < 0) return 0;
  // A campaign killed with SIGKILL just before this one started may take a moment to die and
  // release the lock: half a second, before taking it for a running one.
  bool locked = false;
  for (int attempt = 0; attempt < 10 && !locked; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  }
  if (locked) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      // The pid only names the holder in another campaign's message.
    }
    return 0;
  }
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  fd = -1;
  const long pid = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
  return pid > 0 ? pid : -1;
}

}  // namespace

StatusFiles::StatusFiles(fs::path dir) : dir_(std::move(dir)) {
  other_owner_ = take_directory_files(dir_, lock_fd_);
  // Another campaign's plot_data is its own; this one's rows start a file of their own.
  if (other_owner_ != 0) return;
  std::ifstream in(dir_ / "plot_data");
  std::string line;
  while (std::getline(in, line)) {
    // Rows of earlier campaigns; a torn last line (impossible with atomic writes, but a file may
    // come from elsewhere) is dropped.
    if (line.empty() || line[0] == '#' || std::count(line.begin(), line.end(), ',') != 8) continue;
    plot_ += line + "\n";
  }
}

StatusFiles::~StatusFiles() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

fs::path StatusFiles::stats_path() const {
  if (other_owner_ == 0 || record_name_.empty()) return dir_ / "fuzzer_stats";
  return dir_ / "campaigns" / fs::path(record_name_).replace_extension(".fuzzer_stats");
}

void StatusFiles::update(const StatusSnapshot& s) {
  fs::create_directories(dir_ / "campaigns");
  if (record_name_.empty()) record_name_ = reserve_record_name(dir_ / "campaigns", s.start_time);
  plot_ += plot_data_row(s) + "\n";
  const fs::path plot =
      other_owner_ == 0
          ? dir_ / "plot_data"
          : dir_ / "campaigns" / fs::path(record_name_).replace_extension(".plot_data");
  write_file_atomically(plot, std::string(kPlotDataHeader) + "\n" + plot_);
  write_file_atomically(stats_path(), fuzzer_stats_text(s));
  write_file_atomically(dir_ / "campaigns" / record_name_, campaign_record(s).dump(2) + "\n");
}

std::vector<PlotRow> read_all_plot_data(const fs::path& dir) {
  std::error_code ec;
  std::vector<PlotRow> rows;
  if (fs::exists(dir / "plot_data", ec)) rows = parse_plot_data(read_text_file(dir / "plot_data"));
  std::vector<fs::path> others;
  for (fs::directory_iterator it(dir / "campaigns", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() == ".plot_data") others.push_back(it->path());
  }
  std::sort(others.begin(), others.end());
  for (const auto& p : others) {
    try {
      const auto more = parse_plot_data(read_text_file(p));
      rows.insert(rows.end(), more.begin(), more.end());
    } catch (const std::exception&) {
      // Unreadable: the report shows the others.
    }
  }
  return rows;
}

SeenRecord read_seen(const fs::path& bundle_dir) {
  SeenRecord r;
  try {
    const auto j = nlohmann::json::parse(read_text_file(bundle_dir / "seen.json"));
    r.first_seen = j.at("first_seen").get<std::time_t>();
    r.last_seen = j.at("last_seen").get<std::time_t>();
    r.hits = j.at("hits").get<std::uint64_t>();
    r.campaigns = j.at("campaigns").get<std::uint64_t>();
  } catch (const std::exception&) {
    return SeenRecord{};
  }
  return r;
}

void record_seen(const fs::path& bundle_dir, std::uint64_t hits, std::time_t now,
                 bool new_campaign) {
  // Campaigns on one directory add to one count.
  BundleLock lock(bundle_dir);
  SeenRecord r = read_seen(bundle_dir);
  if (r.first_seen == 0) r.first_seen = now;
  r.last_seen = now;
  r.hits += hits;
  if (new_campaign) r.campaigns += 1;
  const nlohmann::json j = {{"first_seen", r.first_seen},
                            {"last_seen", r.last_seen},
                            {"hits", r.hits},
                            {"campaigns", r.campaigns}};
  write_file_atomically(bundle_dir / "seen.json", j.dump(2) + "\n");
}

}  // namespace aotfuzz::bundles
