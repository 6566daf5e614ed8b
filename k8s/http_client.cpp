// HTTP/1.1 over a Unix socket (see http_client.h).
#include "http_client.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace vtime::k8s {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// Waits until fd is readable (or writable); false when the timeout passed first.
bool wait_fd(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = poll(&p, 1, static_cast<int>(timeout.count()));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw HttpError(std::string("poll: ") + strerror(errno));
  }
}

// Reads one response from fd into a parser until it is complete.
HttpResponse read_response(int fd, std::chrono::milliseconds timeout, ResponseParser& p) {
  HttpResponse r;
  char buf[65536];
  while (!p.complete()) {
    if (!wait_fd(fd, POLLIN, timeout)) {
      throw HttpTimeout("no answer from the API for " + std::to_string(timeout.count() / 1000) + " s");
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw HttpError(std::string("read: ") + strerror(errno));
    }
    if (n == 0) {
      p.feed_eof();
      break;
    }
    p.feed(std::string_view(buf, static_cast<size_t>(n)));
    r.body += p.take_body();
  }
  r.body += p.take_body();
  r.status = p.status();
  return r;
}

}  // namespace

// ---- ResponseParser ----------------------------------------------------------------------------

void ResponseParser::feed(std::string_view bytes) {
  in_.append(bytes);
  parse();
}

void ResponseParser::feed_eof() {
  if (state_ == State::body_eof) {
    state_ = State::done;
    return;
  }
  if (state_ != State::done) throw HttpError("the connection closed in the middle of a response");
}

std::string ResponseParser::take_body() {
  std::string out;
  out.swap(body_);
  return out;
}

bool ResponseParser::take_line(std::string& line) {
  size_t nl = in_.find('\n');
  if (nl == std::string::npos) {
    if (in_.size() > 65536) throw HttpError("an HTTP header line longer than 64 KiB");
    return false;
  }
  line.assign(in_, 0, nl);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  in_.erase(0, nl + 1);
  return true;
}

void ResponseParser::on_header(const std::string& line) {
  size_t colon = line.find(':');
  if (colon == std::string::npos) throw HttpError("malformed HTTP header '" + line.substr(0, 80) + "'");
  std::string key = lower(trim(std::string_view(line).substr(0, colon)));
  std::string value = trim(std::string_view(line).substr(colon + 1));
  if (key == "transfer-encoding" && lower(value).find("chunked") != std::string::npos) chunked_ = true;
  if (key == "content-length") {
    long long v = -1;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v < 0) {
      throw HttpError("malformed Content-Length '" + value + "'");
    }
    length_ = v;
  }
}

void ResponseParser::parse() {
  std::string line;
  for (;;) {
    switch (state_) {
      case State::status_line: {
        if (!take_line(line)) return;
        // "HTTP/1.1 200 OK"
        if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) {
          throw HttpError("not an HTTP response: '" + line.substr(0, 80) + "'");
        }
        auto [ptr, ec] = std::from_chars(line.data() + 9, line.data() + 12, status_);
        if (ec != std::errc() || ptr != line.data() + 12) throw HttpError("malformed HTTP status line '" + line + "'");
        // An interim response (100 Continue): its headers, then the real response.
        state_ = status_ >= 100 && status_ < 200 ? State::interim_headers : State::headers;
        break;
      }
      case State::interim_headers:
        if (!take_line(line)) return;
        if (line.empty()) state_ = State::status_line;
        break;
      case State::headers:
        if (!take_line(line)) return;
        if (!line.empty()) {
          on_header(line);
          break;
        }
        if (status_ == 204 || status_ == 304) {
          state_ = State::done;
        } else if (chunked_) {
          state_ = State::chunk_size;
        } else if (length_ >= 0) {
          remaining_ = length_;
          state_ = remaining_ ? State::body_length : State::done;
        } else {
          state_ = State::body_eof;
        }
        break;
      case State::body_length: {
        size_t n = static_cast<size_t>(std::min<long long>(remaining_, static_cast<long long>(in_.size())));
        body_.append(in_, 0, n);
        in_.erase(0, n);
        remaining_ -= static_cast<long long>(n);
        if (remaining_ > 0) return;
        state_ = State::done;
        break;
      }
      case State::chunk_size: {
        if (!take_line(line)) return;
        size_t semi = line.find(';');  // chunk extensions are allowed and ignored
        std::string hex = trim(std::string_view(line).substr(0, semi));
        long long size = -1;
        auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
        if (hex.empty() || ec != std::errc() || ptr != hex.data() + hex.size() || size < 0) {
          throw HttpError("malformed chunk size '" + line.substr(0, 40) + "'");
        }
        remaining_ = size;
        state_ = size ? State::chunk_data : State::trailers;
        break;
      }
      case State::chunk_data: {
        size_t n = static_cast<size_t>(std::min<long long>(remaining_, static_cast<long long>(in_.size())));
        body_.append(in_, 0, n);
        in_.erase(0, n);
        remaining_ -= static_cast<long long>(n);
        if (remaining_ > 0) return;
        state_ = State::chunk_crlf;
        break;
      }
      case State::chunk_crlf:
        if (!take_line(line)) return;
        if (!line.empty()) throw HttpError("a chunk longer than its size");
        state_ = State::chunk_size;
        break;
      case State::trailers:
        if (!take_line(line)) return;
        if (line.empty()) state_ = State::done;
        break;
      case State::body_eof:
        body_ += in_;
        in_.clear();
        return;
      case State::done:
        return;
    }
  }
}

// ---- sockets ---------------------------------------------------------------------------------

int connect_unix(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw HttpError("socket path too long: " + path);
  std::copy(path.begin(), path.end(), a.sun_path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw HttpError(std::string("socket: ") + strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    close(fd);
    throw HttpError("cannot connect to " + path + ": " + strerror(e));
  }
  return fd;
}

void write_all(int fd, std::string_view bytes, std::chrono::milliseconds timeout) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (!wait_fd(fd, POLLOUT, timeout)) throw HttpTimeout("the API does not read its requests");
        continue;
      }
      throw HttpError(std::string("write: ") + strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::string request_bytes(std::string_view method, std::string_view path, std::string_view body,
                          std::string_view content_type) {
  std::string req;
  req.reserve(160 + body.size());
  req.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: localhost\r\n");
  req.append("Accept: application/json\r\nUser-Agent: vtime-k8s\r\n");
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req.append("Content-Type: ").append(content_type).append("\r\n");
    req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  req.append("\r\n").append(body);
  return req;
}

// ---- HttpClient ------------------------------------------------------------------------------

HttpClient::HttpClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout) {}

HttpClient::~HttpClient() { close_socket(); }

void HttpClient::connect_socket() {
  if (fd_ < 0) fd_ = connect_unix(socket_path_);
}

void HttpClient::close_socket() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

HttpResponse HttpClient::request(std::string_view method, std::string_view path, std::string_view body,
                                 std::string_view content_type) {
  std::string req = request_bytes(method, path, body, content_type);
  for (int attempt = 0;; ++attempt) {
    bool reused = fd_ >= 0;
    connect_socket();
    try {
      write_all(fd_, req, timeout_);
      ResponseParser p;
      HttpResponse r = read_response(fd_, timeout_, p);
      return r;
    } catch (const HttpTimeout&) {
      close_socket();
      throw;
    } catch (const HttpError&) {
      close_socket();
      // A keep-alive connection the server closed while we were not looking: once more on a
      // fresh one. Anything else is the caller's error.
      if (!reused || attempt > 0) throw;
    }
  }
}

// ---- WatchStream -----------------------------------------------------------------------------

WatchStream::WatchStream(const std::string& socket_path, std::string_view path, std::chrono::milliseconds timeout) {
  fd_ = connect_unix(socket_path);
  try {
    write_all(fd_, request_bytes("GET", path, {}, {}), timeout);
    char buf[65536];
    while (!parser_.headers_done()) {
      if (!wait_fd(fd_, POLLIN, timeout)) throw HttpTimeout("no answer to the watch for " + std::to_string(timeout.count() / 1000) + " s");
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) throw HttpError(std::string("read: ") + strerror(errno));
      if (n == 0) throw HttpError("the API closed the watch before answering");
      parser_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    if (parser_.status() != 200) {
      HttpResponse rest = read_response(fd_, timeout, parser_);
      throw HttpError("watch " + std::string(path) + " answered " + std::to_string(parser_.status()) + ": " +
                      rest.body.substr(0, 300));
    }
    partial_ = parser_.take_body();
  } catch (...) {
    close(fd_);
    throw;
  }
}

WatchStream::~WatchStream() {
  if (fd_ >= 0) close(fd_);
}

std::vector<std::string> WatchStream::read_available() {
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      throw HttpError(std::string("watch read: ") + strerror(errno));
    }
    if (n == 0) {
      parser_.feed_eof();
      ended_ = true;
      break;
    }
    parser_.feed(std::string_view(buf, static_cast<size_t>(n)));
    if (parser_.complete()) ended_ = true;
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  partial_ += parser_.take_body();
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (nl > start) lines.emplace_back(partial_, start, nl - start);
  }
  partial_.erase(0, start);
  return lines;
}

}  // namespace vtime::k8s
