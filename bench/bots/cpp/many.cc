// A benchmark client in C++ that plays many seats from one process: one thread and
// one channel (its own TCP connection) per seat token read from stdin, each answering
// every request with its fallback at once (bench/workers.py --bot cpp). It asks for
// VERDICT_FAULTS_ONLY, as bench/bots/fallback_bot.py does, and prints one JSON line on
// exit: {"requests": N, "ended": seats that saw MatchEnd, "redirects": seats sent on to a
// worker at Hello, "retries": openings tried again after the server refused them
// (UNAVAILABLE before any message), "error_count": streams that failed}.
//
//   bench/bots/cpp/many --server HOST:PORT [--think-ms N] < tokens    (make -C bench/bots/cpp)
//
// --think-ms N: each answer waits N ms first (a sleep: no CPU), so that a load level can
// be run below the machine's saturation (bench/remote.py --bot-think-ms).
//
// --trace FILE: writes [token, seq, arrived, departed] per answer (CLOCK_MONOTONIC s), as
// bench/bots/fallback_bot.py --trace does: by this machine's kernel (TCP_INFO on the
// seat's own connection), when the request arrived (tcpi_last_data_recv at its read) and
// when the answer left (tcpi_last_data_sent at the next read: nothing is sent between),
// so that bench/remote.py can set each charge against all the seat's time on this
// machine, its threads' waits for a CPU included. To know each seat's socket, seats then
// connect one at a time (the TCP and HTTP/2 handshakes, not the streams: all the
// matches still start together).
//
// Why C++: the benchmark's bots share the machine's cores with the servers they load, so
// their CPU per decision must be small next to the server's; bench/workers.py measures
// both. Like the sample bot it follows a redirect at Hello (arena-seat-address).

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "arena/v1/arena.grpc.pb.h"

namespace {

std::atomic<long> requests{0};
std::atomic<int> ended{0};
std::atomic<int> errors{0};
std::atomic<int> redirects{0};  // seats sent on to a worker by the front at Hello
std::atomic<int> retries{0};  // openings tried again after an UNAVAILABLE
int think_ms = 0;  // --think-ms
bool tracing = false;  // --trace
std::mutex opening;  // tracing: one channel connects at a time
std::mutex gathering;  // tracing: the seats' streams open once every channel is connected
std::condition_variable all_connected;
size_t seats_total = 0, seats_connected = 0;
std::mutex traced;
struct Row {
  std::string token;
  long seq;
  double arrived, departed;  // CLOCK_MONOTONIC s; departed < 0: not known
};
std::vector<Row> rows;

double monotonic() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// This process's TCP sockets (by /proc/self/fd and each one's address family).
std::set<int> tcp_sockets() {
  std::set<int> found;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return found;
  while (dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    int domain = 0, type = 0;
    socklen_t size = sizeof(int);
    if (fd <= 2 || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0) continue;
    size = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0) continue;
    if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM) found.insert(fd);
  }
  closedir(dir);
  return found;
}

// (when data last arrived, when data last left) on socket fd, CLOCK_MONOTONIC s.
bool kernel_times(int fd, double* arrived, double* departed) {
  tcp_info info;
  socklen_t size = sizeof(info);
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  const double now = monotonic();
  *arrived = now - info.tcpi_last_data_recv / 1000.0;
  *departed = now - info.tcpi_last_data_sent / 1000.0;
  return true;
}

// Plays one seat; the address it is sent to, or "" when the stream is over. *refused:
// the server failed the call with UNAVAILABLE before sending anything (an overloaded
// server refusing a connection among a thousand opening at once): the caller tries again.
std::string play(const std::string& server, const std::string& token, bool* refused,
                 bool first) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.use_local_subchannel_pool", 1);  // one TCP connection per seat
  args.SetInt("grpc.http2.bdp_probe", 0);  // no pings after an answer (docs/protocol.md)
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  int fd = -1;  // tracing: this seat's socket
  if (tracing) {  // connected one at a time (the transport only: the streams open at once)
    std::lock_guard<std::mutex> one_at_a_time(opening);
    const std::set<int> before = tcp_sockets();
    channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::vector<int> fresh;
    for (int s : tcp_sockets())
      if (!before.count(s)) fresh.push_back(s);
    if (fresh.size() == 1) fd = fresh[0];
  }
  if (tracing && first) {  // every seat's channel first, then every stream: matches start together
    std::unique_lock<std::mutex> lock(gathering);
    if (++seats_connected == seats_total) all_connected.notify_all();
    all_connected.wait(lock, [] { return seats_connected >= seats_total; });
  }
  auto stub = arena::v1::Arena::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);
  std::vector<Row> mine;
  arena::v1::BotMessage hello;
  auto* h = hello.mutable_hello();
  h->set_token(token);
  h->set_name("bench-cpp");
  h->set_version("bench");
  h->set_protocol(1);
  h->set_verdicts(arena::v1::VERDICT_FAULTS_ONLY);
  stream->Write(hello);
  arena::v1::RefereeMessage message;
  arena::v1::BotMessage answer;
  bool over = false;
  bool heard = false;
  long answered = 0;
  while (stream->Read(&message)) {
    heard = true;
    double arrived = -1, departed = -1;
    const bool timed = fd >= 0 && kernel_times(fd, &arrived, &departed);
    if (timed && !mine.empty() && mine.back().departed < 0) mine.back().departed = departed;
    if (message.has_request()) {
      if (timed) mine.push_back({token, static_cast<long>(message.request().seq()), arrived, -1});
      answer.Clear();
      auto* action = answer.mutable_action();
      action->set_seq(message.request().seq());
      *action->mutable_cards() = message.request().fallback().cards();
      if (think_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(think_ms));
      ++answered;
      if (!stream->Write(answer)) break;
    } else if (message.has_match_end()) {
      over = true;
      break;
    }
  }
  requests += answered;
  if (tracing) {
    std::lock_guard<std::mutex> lock(traced);
    rows.insert(rows.end(), mine.begin(), mine.end());
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  if (over) {
    ++ended;
    return "";
  }
  if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    const auto& trailers = context.GetServerTrailingMetadata();
    const auto moved = trailers.find("arena-seat-address");
    if (moved != trailers.end()) {
      ++redirects;
      return std::string(moved->second.data(), moved->second.size());
    }
  }
  if (!heard && status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    *refused = true;
    return server;
  }
  ++errors;
  std::cerr << "bench-cpp: " << status.error_code() << ": " << status.error_message() << "\n";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string server, trace;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
    if (std::strcmp(argv[i], "--think-ms") == 0) think_ms = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--trace") == 0) trace = argv[i + 1];
  }
  tracing = !trace.empty();
  if (server.empty()) {
    std::cerr << "usage: many --server HOST:PORT [--think-ms N] [--trace FILE] < tokens\n";
    return 2;
  }
  std::vector<std::string> tokens;
  for (std::string line; std::getline(std::cin, line);)
    if (!line.empty()) tokens.push_back(line);
  seats_total = tokens.size();
  std::vector<std::thread> seats;
  for (const std::string& token : tokens) {
    seats.emplace_back([server, token] {
      // opening is retried for up to 60 s, as bench/bots/fallback_bot.py does
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      std::string at = server;
      bool first = true;
      for (int moves = 0; moves < 3 && !at.empty();) {
        bool refused = false;
        at = play(at, token, &refused, first);
        first = false;
        if (!refused) {
          ++moves;
        } else if (std::chrono::steady_clock::now() > give_up) {
          ++errors;
          std::cerr << "bench-cpp: the server refused this seat for 60 s\n";
          break;
        } else {
          ++retries;
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      }
    });
  }
  for (auto& seat : seats) seat.join();
  if (tracing) {
    std::ofstream out(trace);
    out.precision(17);
    out << "[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ",\n" : "") << "[\"" << r.token << "\", " << r.seq << ", " << r.arrived << ", ";
      if (r.departed < 0) out << "null]";
      else out << r.departed << "]";
    }
    out << "]\n";
  }
  std::cout << "{\"requests\": " << requests << ", \"ended\": " << ended
            << ", \"redirects\": " << redirects << ", \"retries\": " << retries
            << ", \"error_count\": " << errors << "}"
            << std::endl;
  return errors ? 1 : 0;
}
