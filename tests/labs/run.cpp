#include "run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace {
std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}
void child_env() {
  ::unsetenv("LANG");
  ::unsetenv("LC_ALL");
  ::unsetenv("LANGUAGE");
  ::unsetenv("LC_MESSAGES");
  ::setenv("NO_COLOR", "1", 1);
}
int exit_status(int st) {
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
}  // namespace

RunResult run(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    ::close(fds[0]);
    ::close(fds[1]);
    child_env();
    auto v = c_argv(argv);
    ::execv(v[0], v.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  RunResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.status = exit_status(st);
  return r;
}

RunResult run_pty(const std::vector<std::string>& argv, const std::string& prompt, int timeout_s) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return {};
  if (pid == 0) {
    child_env();
    auto v = c_argv(argv);
    ::execv(v[0], v.data());
    ::_exit(127);
  }
  RunResult r;
  bool closed = false;
  std::size_t answered_upto = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) {  // the child closed the terminal: it is exiting
      closed = true;
      break;
    }
    r.out.append(buf, static_cast<std::size_t>(n));
    const auto at = r.out.find(prompt, answered_upto);
    if (at != std::string::npos) {
      answered_upto = at + prompt.size();
      (void)::write(master, "\n", 1);
    }
  }
  int st = 0;
  if (closed) {
    ::waitpid(pid, &st, 0);
  } else {
    ::kill(pid, SIGKILL);  // it hung
    ::waitpid(pid, &st, 0);
    ::close(master);
    return r;
  }
  ::close(master);
  r.status = exit_status(st);
  return r;
}

std::string mask_addresses(const std::string& s) {
  // Heap addresses: 0x55d0c3a1b2c0 in narration, va=000055d0c3a1b2c0 in the
  // out-of-band line. Keys, PSNs and QPNs are deterministic and stay.
  static const std::regex addr("0x[0-9a-f]{9,16}");
  static const std::regex va("va=[0-9a-f]{16}");
  return std::regex_replace(std::regex_replace(s, addr, "0xADDRESS"), va, "va=ADDRESS");
}
