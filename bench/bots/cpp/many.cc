// A benchmark client in C++ that plays many seats from one process: one thread and
// one channel (its own TCP connection) per seat token read from stdin, each answering
// every request with its fallback at once (bench/workers.py --bot cpp). It asks for
// VERDICT_FAULTS_ONLY, as bench/bots/fallback_bot.py does, and prints one JSON line on
// exit: {"requests": N, "ended": seats that saw MatchEnd, "redirects": seats sent on to a
// worker at Hello, "error_count": streams that failed}.
//
//   bench/bots/cpp/many --server HOST:PORT < tokens    (make -C bench/bots/cpp)
//
// Why C++: the benchmark's bots share the machine's cores with the servers they load, so
// their CPU per decision must be small next to the server's; bench/workers.py measures
// both. Like the sample bot it follows a redirect at Hello (arena-seat-address).

#include <atomic>
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

// Plays one seat; the address it is sent to, or "" when the stream is over.
std::string play(const std::string& server, const std::string& token) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.use_local_subchannel_pool", 1);  // one TCP connection per seat
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
  long answered = 0;
  while (stream->Read(&message)) {
    if (message.has_request()) {
      answer.Clear();
      auto* action = answer.mutable_action();
      action->set_seq(message.request().seq());
      *action->mutable_cards() = message.request().fallback().cards();
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
  ++errors;
  std::cerr << "bench-cpp: " << status.error_code() << ": " << status.error_message() << "\n";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string server;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
  }
  if (server.empty()) {
    std::cerr << "usage: many --server HOST:PORT < tokens (one per line)\n";
    return 2;
  }
  std::vector<std::thread> seats;
  std::string token;
  while (std::getline(std::cin, token)) {
    if (token.empty()) continue;
    seats.emplace_back([server, token] {
      std::string at = server;
      for (int moves = 0; moves < 3 && !at.empty(); ++moves) at = play(at, token);
    });
  }
  for (auto& seat : seats) seat.join();
  std::cout << "{\"requests\": " << requests << ", \"ended\": " << ended
            << ", \"redirects\": " << redirects << ", \"error_count\": " << errors << "}"
            << std::endl;
  return errors ? 1 : 0;
}
