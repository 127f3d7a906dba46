// aotfuzz-runner: the fork server of a campaign worker. Reads batch frames on stdin, answers on
// stdout (oracle/runner/protocol.h); started and restarted by oracle's BatchedExecutor.
#include <csignal>
#include <cstdio>
#include <cstring>

#include "oracle/runner/runner.h"

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "aotfuzz-runner takes no arguments (%s); it serves batch frames on stdin\n",
                 argv[1]);
    return 2;
  }
  // Ctrl-C and SIGTERM reach the whole process group; the campaign stops cleanly on them and
  // ends its runners by closing their sockets (end of file), so they must not die first.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  return aotfuzz::oracle::runner::serve(0, 1);
}
