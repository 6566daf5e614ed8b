// Plain HTTP/1.1 to the Kubernetes API, over the Unix socket of `kubectl proxy`.
//
// What it is for: kube-apiserver 1.20 serves only TLS, and vtime takes no TLS library. The
// bridge runs Kubernetes' own `kubectl proxy --unix-socket PATH` inside the tree (it holds the
// credentials and speaks TLS to the apiserver) and talks plain HTTP to it: one keep-alive
// connection for requests, one per watch. Reads wait with poll() on this process's clock, which
// is virtual under vtime: a timeout fires only when the tree is idle and the answer still has not
// come (a hung apiserver), never because Kubernetes computes slowly.
//
// Example:
//     HttpClient c("/tmp/run/proxy.sock", std::chrono::seconds(60));
//     HttpResponse r = c.request("POST", "/api/v1/nodes", node_json);
//     if (r.status != 201) ...
//     WatchStream w("/tmp/run/proxy.sock", "/api/v1/pods?watch=1", std::chrono::seconds(60));
//     poll w.fd(); for (auto& line : w.read_available()) ...;   // one JSON object per line
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vtime::k8s {

struct HttpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The server did not answer (or read) within the timeout: it may have acted on the request.
struct HttpTimeout : HttpError {
  using HttpError::HttpError;
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

// Incremental parser of one HTTP/1.1 response: status line, headers, then a body framed by
// Content-Length, chunked transfer encoding, or the end of the connection. Throws HttpError on
// bytes that are not HTTP.
class ResponseParser {
 public:
  void feed(std::string_view bytes);
  // The connection ended: completes a body framed by the end of the connection, and is an error
  // anywhere else (a peer that died mid-answer).
  void feed_eof();
  bool headers_done() const { return state_ > State::headers; }
  bool complete() const { return state_ == State::done; }
  int status() const { return status_; }
  // Body bytes decoded so far that have not been taken yet.
  std::string take_body();

 private:
  enum class State { status_line, interim_headers, headers, body_length, chunk_size, chunk_data, chunk_crlf, trailers, body_eof, done };
  void parse();
  bool take_line(std::string& line);
  void on_header(const std::string& line);
  State state_ = State::status_line;
  std::string in_;      // bytes received, not parsed yet
  std::string body_;    // decoded body not yet taken
  int status_ = 0;
  bool chunked_ = false;
  long long length_ = -1;     // Content-Length, -1 when absent
  long long remaining_ = 0;   // of the current chunk or of the body
};

class HttpClient {
 public:
  HttpClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request and its whole response. A connection the server closed while idle is opened
  // again once (never after a timeout: the server may have acted on the request, and a POST
  // sent again would be refused as a duplicate). Throws HttpError when the server cannot be
  // reached or answers with something that is not HTTP, HttpTimeout when it stops answering.
  HttpResponse request(std::string_view method, std::string_view path, std::string_view body = {},
                       std::string_view content_type = "application/json");

 private:
  void connect_socket();
  void close_socket();
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
};

// A streamed response (a Kubernetes watch): newline-delimited JSON objects in a chunked body.
class WatchStream {
 public:
  // Connects, sends the GET and waits for the response's headers. Throws HttpError when the
  // status is not 200 (the message quotes the body's start).
  WatchStream(const std::string& socket_path, std::string_view path, std::chrono::milliseconds timeout);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  int fd() const { return fd_; }
  // Reads what the socket holds now (never blocks) and returns the complete lines received.
  std::vector<std::string> read_available();
  // The server ended the stream (Kubernetes ends watches after a while; open a new one).
  bool ended() const { return ended_; }

 private:
  int fd_ = -1;
  ResponseParser parser_;
  std::string partial_;
  bool ended_ = false;
};

// Helpers shared by both: a connected Unix stream socket, and "write all".
int connect_unix(const std::string& path);
void write_all(int fd, std::string_view bytes, std::chrono::milliseconds timeout);

}  // namespace vtime::k8s
