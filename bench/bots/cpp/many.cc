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
// Why C++: the benchmark's bots share the machine's cores with the servers they load, so
// their CPU per decision must be small next to the server's; bench/workers.py measures
// both. Like the sample bot it follows a redirect at Hello (arena-seat-address).

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
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

// Plays one seat; the address it is sent to, or "" when the stream is over. *refused:
// the server failed the call with UNAVAILABLE before sending anything (an overloaded
// server refusing a connection among a thousand opening at once): the caller tries again.
std::string play(const std::string& server, const std::string& token, bool* refused) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.use_local_subchannel_pool", 1);  // one TCP connection per seat
  args.SetInt("grpc.http2.bdp_probe", 0);  // no pings after an answer (docs/protocol.md)
  auto stub = arena::v1::Arena::NewStub(
      grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  auto stream = stub->Play(&context);
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
    if (message.has_request()) {
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
  std::string server;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
    if (std::strcmp(argv[i], "--think-ms") == 0) think_ms = std::atoi(argv[i + 1]);
  }
  if (server.empty()) {
    std::cerr << "usage: many --server HOST:PORT [--think-ms N] < tokens (one per line)\n";
    return 2;
  }
  std::vector<std::thread> seats;
  std::string token;
  while (std::getline(std::cin, token)) {
    if (token.empty()) continue;
    seats.emplace_back([server, token] {
      // opening is retried for up to 60 s, as bench/bots/fallback_bot.py does
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      std::string at = server;
      for (int moves = 0; moves < 3 && !at.empty();) {
        bool refused = false;
        at = play(at, token, &refused);
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
  std::cout << "{\"requests\": " << requests << ", \"ended\": " << ended
            << ", \"redirects\": " << redirects << ", \"retries\": " << retries
            << ", \"error_count\": " << errors << "}"
            << std::endl;
  return errors ? 1 : 0;
}
