// One client connection of pvhvd: JSON lines, then a console or relay stream (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

void Client::send(std::string bytes) {
  if (closed_) return;
  output_.push(std::move(bytes), false);
  if (!output_.writing()) write_next();
}

void Client::send_console(std::string bytes) {
  if (closed_) return;
  output_.push(std::move(bytes), true);
  if (!output_.writing()) write_next();
}

void Client::write_next() {
  if (output_.empty() || closed_) {
    if (close_after_write_) close();
    return;
  }
  auto self = shared_from_this();
  asio::async_write(socket_, asio::buffer(output_.begin_write()), [self](boost::system::error_code error, size_t) {
    if (error) return self->close();
    self->output_.end_write();
    self->write_next();
  });
}

void Client::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  daemon_.forget(this);
}

void Client::read_line() {
  if (closed_) return;
  auto self = shared_from_this();
  asio::async_read_until(socket_, input_, '\n', [self](boost::system::error_code error, size_t length) {
    if (error == asio::error::not_found) {  // a line over 1 MiB: answered, then the client is dropped
      self->send(dump(error_answer(nullptr, {kE2big, "request longer than 1 MiB"})) + "\n");
      self->close_after_write_ = true;
      if (!self->output_.writing()) self->close();
      return;
    }
    if (error) return self->close();
    std::string line(asio::buffers_begin(self->input_.data()), asio::buffers_begin(self->input_.data()) + length - 1);
    self->input_.consume(length);
    self->on_line(std::move(line));
  });
}

void Client::on_line(std::string line) {
  auto parsed = parse_request(line);
  if (auto* answer = std::get_if<Json>(&parsed)) {
    send(dump(*answer) + "\n");
    return read_line();
  }
  auto self = shared_from_this();
  daemon_.handle(self, std::move(std::get<Request>(parsed)), [self](Json answer) {
    self->send(dump(answer) + "\n");
    if (self->console_) return self->read_raw();
    if (self->relay_) return self->start_relay();
    self->read_line();
  });
}

void Client::become_console(uint32_t domid) { console_ = domid; }

void Client::start_relay() {
  std::string early(asio::buffers_begin(input_.data()), asio::buffers_end(input_.data()));
  input_.consume(input_.size());
  daemon_.serve_relay(shared_from_this(), socket_, std::move(early));
}

void Client::read_raw() {
  if (closed_) return;
  if (input_.size()) {  // bytes the client sent right behind its console request
    std::string early(asio::buffers_begin(input_.data()), asio::buffers_end(input_.data()));
    input_.consume(input_.size());
    daemon_.console_input(*console_, early);
  }
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(raw_), [self](boost::system::error_code error, size_t n) {
    if (error) return self->close();
    self->daemon_.console_input(*self->console_, std::string_view(self->raw_.data(), n));
    self->read_raw();
  });
}

}  // namespace pvhv::daemon::server
