// A complete arena bot in C++: gRPC stubs generated from proto/arena/v1/arena.proto.
//
// Build: `make cpp-bot` at the top of the repository (or `make` here). It needs
// Debian's packages libgrpc++-dev, libprotobuf-dev, protobuf-compiler-grpc and
// pkg-config. `arena match --bot sample_bots/cpp/bot ...` starts it with ARENA_SERVER
// (host:port) and ARENA_TOKEN (the seat token) in its environment.
//
// It bids with its first pair, and otherwise answers with the request's fallback: a
// legal answer the referee computes for every request, so it never faults. Change
// decide() to make it play well; docs/protocol.md describes every message.
//
// A server with several worker processes (`arena serve --workers N`) may refuse the
// Hello with FAILED_PRECONDITION and the trailing metadata `arena-seat-address`: the
// seat plays at that host:port, and main() opens the stream again there.

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "arena/v1/arena.grpc.pb.h"

namespace {

// The cards to answer `request` with (none: pass a bid).
google::protobuf::RepeatedPtrField<arena::v1::Card> decide(const arena::v1::Request& request) {
  if (request.kind() == arena::v1::BID) {
    for (const auto& bid : request.legal_bids()) {
      if (bid.cards_size() >= 2) return bid.cards();
    }
    return {};
  }
  return request.fallback().cards();
}

const char* need(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    std::cerr << "cpp bot: " << name << " is not set (arena match sets it)\n";
    std::exit(2);
  }
  return value;
}

// Plays the seat of `token` at `server`. Returns the address the server sends the
// seat to (a redirect at Hello), or "" once the stream is over (`code`: the exit status).
std::string play(const std::string& server, const std::string& token, int& code) {
  grpc::ChannelArguments args;
  // No bandwidth-delay pings: a ping sent after an answer would date the answer's
  // arrival, and so the time charged, late (docs/protocol.md, "Time per decision").
  args.SetInt("grpc.http2.bdp_probe", 0);
  auto stub = arena::v1::Arena::NewStub(
      grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;  // no deadline: the stream lasts the whole match
  auto stream = stub->Play(&context);

  arena::v1::BotMessage hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_name("cpp_bot");
  hello.mutable_hello()->set_version("1");
  hello.mutable_hello()->set_protocol(1);
  stream->Write(hello);

  arena::v1::RefereeMessage message;
  while (stream->Read(&message)) {
    if (message.has_request()) {
      arena::v1::BotMessage answer;
      answer.mutable_action()->set_seq(message.request().seq());
      *answer.mutable_action()->mutable_cards() = decide(message.request());
      if (!stream->Write(answer)) break;
    } else if (message.has_match_end()) {
      break;
    }
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  code = 0;
  if (!status.ok() && !message.has_match_end()) {
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      const auto& trailers = context.GetServerTrailingMetadata();
      const auto moved = trailers.find("arena-seat-address");
      if (moved != trailers.end()) return std::string(moved->second.data(), moved->second.size());
    }
    std::cerr << "cpp bot: " << status.error_code() << ": " << status.error_message() << "\n";
    code = 1;
  }
  return "";
}

}  // namespace

int main() {
  std::string server = need("ARENA_SERVER");
  const std::string token = need("ARENA_TOKEN");
  int code = 0;
  for (int moves = 0; moves < 3; ++moves) {  // a few redirects in a row at most
    server = play(server, token, code);
    if (server.empty()) return code;
  }
  std::cerr << "cpp bot: redirected too many times (last to " << server << ")\n";
  return 1;
}
