// The xenstore wire format, permission strings and paths (xenstore.h).
#include <errno.h>
#include <string.h>

#include "tools/xenstore/xenstore.h"

namespace xenstore {

bool operator==(const Message& a, const Message& b) {
  return a.type == b.type && a.req_id == b.req_id && a.tx_id == b.tx_id && a.payload == b.payload;
}

Message make_request(uint32_t type, std::vector<std::string_view> args, uint32_t tx_id, uint32_t req_id,
                     bool last_unterminated) {
  Message m;
  m.type = type;
  m.tx_id = tx_id;
  m.req_id = req_id;
  for (size_t i = 0; i < args.size(); ++i) {
    m.payload.append(args[i]);
    if (!(last_unterminated && i + 1 == args.size())) m.payload.push_back('\0');
  }
  return m;
}

std::vector<std::string> split_strings(std::string_view payload) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < payload.size()) {
    size_t nul = payload.find('\0', start);
    if (nul == std::string_view::npos) {
      out.emplace_back(payload.substr(start));
      break;
    }
    out.emplace_back(payload.substr(start, nul - start));
    start = nul + 1;
  }
  return out;
}

const char* error_name(int errnum) {
  for (const auto& e : xsd_errors)
    if (e.errnum == errnum) return e.errstring;
  return xsd_errors[0].errstring;  // Xen answers EINVAL for an errno it has no name for
}

std::string serialize(const Message& message) {
  xsd_sockmsg header{message.type, message.req_id, message.tx_id, static_cast<uint32_t>(message.payload.size())};
  std::string out(reinterpret_cast<const char*>(&header), sizeof header);
  out += message.payload;
  return out;
}

void MessageParser::push(std::string_view bytes) {
  if (state_ == State::error) return;
  buffer_.append(bytes);
  while (buffer_.size() >= sizeof(xsd_sockmsg)) {
    xsd_sockmsg header;
    memcpy(&header, buffer_.data(), sizeof header);
    if (header.len > XENSTORE_PAYLOAD_MAX) {
      state_ = State::error;
      buffer_.clear();
      return;
    }
    if (buffer_.size() < sizeof header + header.len) return;
    Message m;
    m.type = header.type;
    m.req_id = header.req_id;
    m.tx_id = header.tx_id;
    m.payload.assign(buffer_, sizeof header, header.len);
    buffer_.erase(0, sizeof header + header.len);
    ready_.push_back(std::move(m));
  }
}

std::optional<Message> MessageParser::next() {
  if (ready_.empty()) return std::nullopt;
  Message m = std::move(ready_.front());
  ready_.pop_front();
  return m;
}

// Decimal without sign or leading junk, fitting 32 bits.
static std::optional<uint32_t> parse_u32(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(value);
}

std::optional<Perm> parse_perm(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Perm p;
  switch (text[0]) {
    case 'n': p.access = Perm::none; break;
    case 'r': p.access = Perm::read; break;
    case 'w': p.access = Perm::write; break;
    case 'b': p.access = Perm::both; break;
    default: return std::nullopt;
  }
  auto id = parse_u32(text.substr(1));
  if (!id) return std::nullopt;
  p.domid = *id;
  return p;
}

std::string format_perm(const Perm& perm) {
  static const char letters[] = {'n', 'r', 'w', 'b'};
  return std::string(1, letters[perm.access & 3]) + std::to_string(perm.domid);
}

static bool valid_chars(std::string_view path) {
  for (char c : path) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '/' ||
              c == '_' || c == '@';
    if (!ok) return false;
  }
  return true;
}

// Length of "/local/domain/<id>/" at the start of `path`, 0 if it does not start so: Xen
// bounds the part of a path below a domain's home, not the whole.
static size_t local_prefix_length(std::string_view path) {
  constexpr std::string_view prefix = "/local/domain/";
  if (path.substr(0, prefix.size()) != prefix) return 0;
  size_t i = prefix.size(), digits = 0;
  while (i < path.size() && path[i] >= '0' && path[i] <= '9' && digits < 5) ++i, ++digits;
  if (digits == 0 || i >= path.size() || path[i] != '/') return 0;
  return i + 1;
}

bool is_valid_node_path(std::string_view path, unsigned max_relative_path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() > 1 && path.back() == '/') return false;
  if (path.find("//") != std::string_view::npos) return false;
  if (path.size() > local_prefix_length(path) + max_relative_path) return false;
  return valid_chars(path);
}

bool is_special_path(std::string_view path) { return path == kIntroduceDomain || path == kReleaseDomain; }

std::string domain_path(DomId domid) { return "/local/domain/" + std::to_string(domid); }

std::string canonical_path(DomId domid, std::string_view path) {
  if (path.empty() || path[0] == '/' || path[0] == '@') return std::string(path);
  return domain_path(domid) + "/" + std::string(path);
}

std::string parent_path(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace xenstore
